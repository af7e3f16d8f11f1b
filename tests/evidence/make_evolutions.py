"""Write the site evolutions under fixtures/evolutions/ (run by hand, seeded).

    python3 tests/evidence/make_evolutions.py

Each evolution is a small static site built twice, ``v1/`` and ``v2/``: between the
builds its template churns (footer year, asset versions, recent posts, menus,
counters, previous/next links, series boxes, banners, or a whole new theme) and a few
pages get a real edit (a paragraph added or rewritten, a price or a date changed, a
section removed, a typo fixed). ``manifest.json`` records each page's truth (changed
or not, and how); each build's ``sitemap.xml`` carries lastmods that agree with the
truth (a page's lastmod moves exactly when its main content changed), so an accurate
audit trusts every site across the two runs. ``{{origin}}`` is filled in by the
loopback server (tests/loopback.py).
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass, field
from pathlib import Path

from tests.evidence.evolution_themes import THEMES, Frame, Page, Render

ROOT = Path(__file__).resolve().parents[2] / "fixtures" / "evolutions"
PAGES = 18  # 18 of 18 pages agreeing: Wilson lower bound 0.82, over the 0.8 bar

SENTENCES = [
    "The {x} was the first thing we looked at this season, and it did not disappoint.",
    "Most readers asked how the {x} compares with the {y}, so we tried both side by side.",
    "We measured the {x} twice, once in the morning and once after lunch.",
    "A neighbour suggested keeping the {x} away from the {y} for the first weeks.",
    "Nothing about the {x} is complicated once you have seen it done a few times.",
    "The {y} turned out to matter more than we expected when planning the {x}.",
    "If you only have an hour, start with the {x} and leave the {y} for later.",
    "Our notes on the {x} from last year were wrong in one small but important way.",
    "It took three attempts before the {x} behaved the way the manual describes.",
    "Prices for the {y} went up this year, which changes the sums for the {x}.",
    "Beginners often skip the {x}, and then wonder why the {y} gives them trouble.",
    "There is no single right answer for the {x}; it depends on the {y} you have.",
    "We kept a simple log of the {x} and compared it with the {y} every week.",
    "The local club lent us a {y}, which made the {x} much easier to judge.",
    "After a month the {x} still looked fine, although the {y} needed attention.",
    "Write down what you change about the {x}, because you will forget by autumn.",
    "The hardest part of the {x} is waiting, not the work itself.",
    "One reader wrote in to say the {x} also works without a {y}, and she was right.",
]


@dataclass
class Edit:
    """A real edit of one page between the builds: its truth is "changed"."""

    what: str
    apply: Callable[[Page], None]


@dataclass
class Evolution:
    """One site's two builds: themes, frames, page content and the edits."""

    name: str
    about: str
    theme: tuple[str, str]
    frames: tuple[Frame, Frame]
    nouns: list[str]
    template_changes: list[str]
    edits: dict[int, Edit]
    added_page: bool = True
    shop: bool = False
    short: bool = False  # pages of a sentence or two and a command (documentation)
    words: dict[int, str] = field(default_factory=dict)


def prose(rng: random.Random, subject: str, nouns: list[str], sentences: int = 3) -> str:
    picks = rng.sample(SENTENCES, sentences)
    return " ".join(s.format(x=subject, y=rng.choice(nouns)) for s in picks)


def make_pages(evo: Evolution, rng: random.Random) -> list[Page]:
    pages = []
    for i in range(PAGES + 1):  # the last one is published in v2 only
        subject = evo.nouns[i % len(evo.nouns)] + ("" if i < len(evo.nouns) else " again")
        if evo.short:
            blocks = [("p", prose(rng, subject, evo.nouns, 2)), ("pre", f"tool {subject} --help")]
        else:
            blocks = [("p", prose(rng, subject, evo.nouns)) for _ in range(3)]
            blocks.insert(2, ("h2", f"What we learned about the {subject}"))
        if i % 3 == 0:
            blocks.append(("h2", "Further notes"))
            blocks.append(("p", prose(rng, subject, evo.nouns, 1 if evo.short else 2)))
        month = 1 + i % 9
        page = Page(
            path=f"/{evo.name.split('-')[0]}/{subject.replace(' ', '-')}.html",
            title=f"Notes on the {subject}",
            blocks=blocks,
            lastmod=f"2026-{month:02d}-{3 + i:02d}T{8 + i % 10:02d}:{(7 * i) % 60:02d}:00Z",
            date=f"{3 + i} {MONTHS[month - 1]} 2026",
        )
        if evo.shop:
            page.price = f"{19 + 5 * (i % 7)}.90"
            page.specs = [("Weight", f"{1 + i % 4}.{i % 10} kg"), ("Colour", "green")]
        pages.append(page)
    return pages


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September"]


def counters(rng: random.Random) -> dict[str, int]:
    return {
        "comments": rng.randint(0, 9),
        "views": rng.randint(100, 99_000),
        "likes": rng.randint(0, 500),
        "ago": rng.randint(2, 60),
        "read": rng.randint(3, 9),
    }


def build(evo: Evolution, version: int, pages: list[Page], rng: random.Random) -> None:
    folder = ROOT / evo.name / f"v{version}"
    folder.mkdir(parents=True)
    theme = THEMES[evo.theme[version - 1]]
    frame = evo.frames[version - 1]
    for i, page in enumerate(pages):
        related = [pages[(i + k * 5) % len(pages)] for k in (1, 2, 3)]
        render = Render(
            page,
            frame,
            pages[i - 1] if i else None,
            pages[i + 1] if i + 1 < len(pages) else None,
            related if version == 1 else [pages[(i + k * 7) % len(pages)] for k in (1, 2)],
            counters(rng),
        )
        target = folder / page.path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(theme(render), encoding="utf-8")
    urls = "\n".join(
        f"  <url><loc>{{{{origin}}}}{p.path}</loc><lastmod>{p.lastmod}</lastmod></url>"
        for p in pages
    )
    (folder / "sitemap.xml").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}\n</urlset>\n',
        encoding="utf-8",
    )


def write(evo: Evolution, seed: int) -> None:
    rng = random.Random(seed)
    folder = ROOT / evo.name
    shutil.rmtree(folder, ignore_errors=True)
    v1 = make_pages(evo, rng)
    for index, word in evo.words.items():  # text a later edit needs (a typo, a price...)
        v1[index].blocks[0] = ("p", word + " " + v1[index].blocks[0][1])
    v2 = deepcopy(v1)
    truth = {}
    for i, page in enumerate(v1[:PAGES]):
        edit = evo.edits.get(i)
        if edit is not None:
            edit.apply(v2[i])
            v2[i].lastmod = f"2026-11-{10 + i % 15:02d}T09:{(3 * i) % 60:02d}:00Z"
        truth[page.path] = {"changed": edit is not None, "edit": edit.what if edit else None}
    build(evo, 1, v1[:PAGES], rng)
    build(evo, 2, v2 if evo.added_page else v2[:PAGES], rng)
    manifest = {
        "site": evo.name,
        "about": evo.about,
        "themes": list(evo.theme),
        "template_changes": evo.template_changes,
        "added_in_v2": [v2[PAGES].path] if evo.added_page else [],
        "pages": truth,
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", "utf-8")


def main() -> None:
    from tests.evidence.evolution_list import EVOLUTIONS

    for seed, evo in enumerate(EVOLUTIONS, start=2026):
        write(evo, seed)
        print(f"wrote {ROOT / evo.name}")


if __name__ == "__main__":
    main()
