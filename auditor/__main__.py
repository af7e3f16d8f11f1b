"""``python -m auditor``."""

import sys

from auditor.cli import main

sys.exit(main())
