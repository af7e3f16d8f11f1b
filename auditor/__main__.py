"""``python -m auditor``: the command line, as the ``auditor`` script runs it.

Touches: the network, the database, the disk.
"""

import sys

from auditor.cli import main

sys.exit(main())
