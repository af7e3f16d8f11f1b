"""The evolutions written by tests/evidence/make_evolutions.py: what churns, what is edited."""

from __future__ import annotations

from tests.evidence.evolution_themes import Frame, Page
from tests.evidence.make_evolutions import Edit, Evolution

__all__ = ["EVOLUTIONS"]


def replace_text(old: str, new: str) -> Edit:
    """Replace ``old`` by ``new`` in the one block that holds it."""

    def apply(page: Page) -> None:
        hits = [i for i, (_, text) in enumerate(page.blocks) if old in text]
        assert len(hits) == 1, (page.path, old, hits)
        tag, text = page.blocks[hits[0]]
        page.blocks[hits[0]] = (tag, text.replace(old, new))

    return Edit(f"{old!r} -> {new!r}", apply)


def add_paragraph(text: str) -> Edit:
    return Edit("a paragraph added", lambda page: page.blocks.append(("p", text)))


def rewrite_paragraph(index: int, text: str) -> Edit:
    def apply(page: Page) -> None:
        paragraphs = [i for i, (tag, _) in enumerate(page.blocks) if tag == "p"]
        page.blocks[paragraphs[index]] = ("p", text)

    return Edit("a paragraph rewritten", apply)


def remove_section() -> Edit:
    def apply(page: Page) -> None:
        start = page.blocks.index(("h2", "Further notes"))
        del page.blocks[start : start + 2]

    return Edit("a section removed (heading and paragraph)", apply)


def add_step(text: str) -> Edit:
    return Edit("a step added to a list", lambda page: page.blocks.append(("li", text)))


def new_price(price: str) -> Edit:
    def apply(page: Page) -> None:
        page.price = price

    return Edit(f"price changed to {price}", apply)


def drop_spec() -> Edit:
    def apply(page: Page) -> None:
        page.specs = page.specs[:1]

    return Edit("a row of the specs table removed", apply)


GARDEN = ["tomato bed", "compost heap", "rain barrel", "herb spiral", "pea trellis",
          "cold frame", "bean row", "potato sack", "leek trench", "apple tree",
          "worm bin", "seed tray", "garlic patch", "strawberry pot", "mulch layer",
          "pumpkin mound", "onion set", "water butt", "bee hotel"]  # fmt: skip
DOCS = ["install guide", "config file", "cache option", "retry policy", "proxy setting",
        "log format", "plugin hook", "output folder", "timeout flag", "dry run",
        "exit code", "env variable", "lock file", "update check", "shell completion",
        "debug mode", "batch mode", "error report", "api token"]  # fmt: skip
SHOP = ["garden hose", "watering can", "pruning saw", "hand trowel", "knee pad",
        "plant label", "seed box", "hose reel", "garden fork", "leaf rake",
        "twine roll", "grow bag", "bird feeder", "garden kneeler", "soil scoop",
        "sprayer", "cloche", "planter", "hedge shears"]  # fmt: skip
CITY = ["harbour bridge", "tram line", "city library", "market hall", "bus depot",
        "river path", "town hall", "swimming pool", "night market", "bike lane",
        "old theatre", "fire station", "ferry pier", "school roof", "water tower",
        "park pond", "train station", "museum wing", "sports field"]  # fmt: skip
SHED = ["shed floor", "shed walls", "shed roof", "shed door", "workbench",
        "tool wall", "paint job", "gutter", "window frame", "shelf unit",
        "floor joists", "roof felt", "door hinge", "base slab", "wall studs",
        "corner brace", "vent", "lock", "ramp"]  # fmt: skip
TOWN = ["village fete", "duck pond", "church clock", "post office", "bakery",
        "football club", "allotment", "youth club", "bus shelter", "village hall",
        "flower show", "cricket pitch", "pub quiz", "dog show", "book swap",
        "choir", "cycle club", "repair cafe", "farmers market"]  # fmt: skip

MENU = [f"{n}. {topic.capitalize()}" for n, topic in enumerate(DOCS * 2, start=1)]

EVOLUTIONS = [
    Evolution(
        "wordpress-blog",
        "A WordPress blog: footer year, asset versions, recent posts, comment and view "
        "counts, previous/next links (a new post), comments; four posts edited.",
        ("wordpress", "wordpress"),
        (
            Frame(
                "Green Thumb Notes", 2025, "6.4.2", [f"Notes on the {n}" for n in GARDEN[17:12:-1]]
            ),
            Frame(
                "Green Thumb Notes", 2026, "6.5.0", [f"Notes on the {n}" for n in GARDEN[18:13:-1]]
            ),
        ),
        GARDEN,
        [
            "copyright year",
            "asset versions",
            "recent posts",
            "comment and view counts",
            "previous/next links",
            "comment list",
        ],
        {
            2: replace_text("Teh seedlings", "The seedlings"),
            5: add_paragraph("Update: the frost came early, so we covered the bed with fleece."),
            9: rewrite_paragraph(1, "We changed our minds about the spacing after a wet June."),
            13: replace_text("on 12 March 2026", "on 19 March 2026"),
        },
        words={2: "Teh seedlings came up in ten days.", 13: "The swap is on 12 March 2026."},
    ),
    Evolution(
        "handmade-site",
        "A hand-written club site without semantic markup (the body is the content root): "
        "copyright line, a menu of plain paragraphs, a news ticker; four pages edited.",
        ("handmade", "handmade"),
        (
            Frame(
                "Allotment Society",
                2025,
                "3",
                menu=["Home", "Plots", "Shows", "Join us"],
                ticker="Next meeting: Tuesday 7 April, in the village hall.",
            ),
            Frame(
                "Allotment Society",
                2026,
                "4",
                menu=["Home", "Plots", "Shows", "Seeds", "Join us"],
                ticker="Next meeting: Tuesday 5 May, at the community garden.",
            ),
        ),
        TOWN,
        ["copyright year", "menu entry added", "news ticker", "asset versions"],
        {
            0: remove_section(),
            4: rewrite_paragraph(0, "The committee agreed a new rota for the shared tools."),
            7: replace_text("membership costs €30 a year", "membership costs €35 a year"),
            10: replace_text("recieve", "receive"),
        },
        words={7: "The membership costs €30 a year.", 10: "Members recieve a key."},
    ),
    Evolution(
        "docs-small-main",
        "Short documentation pages beside a long menu (main under a tenth of the body, so "
        "the body is the root): a menu entry, a version note, previous/next; four edited.",
        ("docs", "docs"),
        (
            Frame(
                "Tool docs",
                2025,
                "2.3.0",
                menu=MENU[:36],
                version="You are reading the docs of version 2.3.",
            ),
            Frame(
                "Tool docs",
                2026,
                "2.4.0",
                menu=[*MENU[:36], "37. Migration notes"],
                version="You are reading the docs of version 2.4.",
            ),
        ),
        DOCS,
        ["menu entry added", "version note", "previous/next links", "copyright year"],
        {
            1: replace_text("timeout of 30 seconds", "timeout of 60 seconds"),
            6: add_paragraph("On Windows, run the command from PowerShell, not cmd.exe."),
            11: replace_text("seperate", "separate"),
            15: remove_section(),
        },
        words={1: "The default is a timeout of 30 seconds.", 11: "Use a seperate file."},
        short=True,
    ),
    Evolution(
        "shop",
        "A shop: a cookie notice added, an unmarked promotion strip, customers-also-bought "
        "boxes, asset versions; two prices, a description and a specs table edited.",
        ("shop", "shop"),
        (
            Frame("Potting Shed Supplies", 2025, "a1", promo="Free delivery on orders over €50."),
            Frame(
                "Potting Shed Supplies",
                2026,
                "b7",
                cookie=True,
                promo="Free delivery on orders over €40 until Sunday.",
            ),
        ),
        SHOP,
        ["cookie notice added", "promotion strip", "customers also bought", "asset versions"],
        {
            2: new_price("24.90"),
            8: new_price("44.90"),
            5: rewrite_paragraph(2, "Now made from recycled plastic, with a stronger handle."),
            12: drop_spec(),
        },
        shop=True,
    ),
    Evolution(
        "news-theme-change",
        "A news site redesigned: every page's markup rewritten (no main, no article, "
        "paragraphs in divs), the same words; four stories edited.",
        ("news-classic", "news-modern"),
        (Frame("The Riverside Gazette", 2026, "1"), Frame("The Riverside Gazette", 2026, "2")),
        CITY,
        ["a new theme: every page's markup, not its words"],
        {
            3: add_paragraph("The council will publish the full report next week."),
            8: replace_text("on 12 March 2026", "on 26 March 2026"),
            12: replace_text("goverment", "government"),
            15: remove_section(),
        },
        words={8: "Works start on 12 March 2026.", 12: "The goverment paid half."},
    ),
    Evolution(
        "series-tutorials",
        "Tutorials in a series: the series box gains a part, previous/next part links, a "
        "rotating more-tutorials box; four tutorials edited.",
        ("tutorials", "tutorials"),
        (
            Frame("Build It Yourself", 2025, "5", [f"Notes on the {n}" for n in SHED[:4]]),
            Frame(
                "Build It Yourself", 2026, "5", [f"Notes on the {n}" for n in [*SHED[:4], SHED[18]]]
            ),
        ),
        SHED,
        ["series box (a part added)", "previous/next links", "more tutorials box", "year"],
        {
            1: replace_text("cut the board to 120 cm", "cut the board to 125 cm"),
            3: add_step("Seal the joints with a bead of silicone."),
            9: rewrite_paragraph(0, "Measure twice: the ground is rarely as level as it looks."),
            12: remove_section(),
        },
        words={1: "First cut the board to 120 cm.", 3: "Then fit the panels."},
    ),
    Evolution(
        "community-counters",
        "A community magazine: days-ago, read-time, view, like and comment counters, an "
        "unmarked trending column, an unmarked cookie bar added; three stories edited.",
        ("community", "community"),
        (
            Frame("Village Voice", 2025, "9", [f"Notes on the {n}" for n in TOWN[2:6]]),
            Frame(
                "Village Voice", 2026, "9", [f"Notes on the {n}" for n in TOWN[5:9]], cookie=True
            ),
        ),
        TOWN,
        ["counters", "trending column", "cookie bar added", "copyright year"],
        {
            4: replace_text("teh village", "the village"),
            9: replace_text("12,400 residents", "12,450 residents"),
            14: add_paragraph("Correction: the fete raised more than first reported."),
        },
        words={4: "Everyone in teh village came.", 9: "The parish has 12,400 residents."},
    ),
]
