"""The nouns a question's rules read by: those that ask a place, a measure, a name, a time or a part,
the roles that reach a subject through another thing, and the test of a noun that is such a role."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

# fmt: off
PLACE_NOUNS = {"city", "country", "town", "state", "region", "republic", "continent", "place", "province",
               "island", "kingdom", "empire", "museum", "capital", "location", "nation"}
# What a number answers: "how large is the population of X" wants a number.
MEASURE_NOUNS = {"population", "area", "height", "length", "depth", "width", "weight", "mass", "size", "diameter",
                 "distance", "speed", "temperature", "elevation", "altitude", "volume", "capacity", "number",
                 "count", "radius", "density", "circumference", "duration"}
NAMING_NOUNS = {"name", "term", "word", "title"}  # "the name of X" asks what X is called, not for a thing
TIME_NOUNS = {"year", "decade", "century", "date", "day", "month", "era", "period"}
# a part or a point of a thing, not a thing of its own ("near the end of a war", "the rest of X")
PART_NOUNS = {"end", "beginning", "start", "middle", "rest", "part", "side", "top", "bottom", "half"}
PERSON_NOUNS = {
    "person", "man", "woman", "people", "architect", "sculptor", "painter", "artist", "author", "writer",
    "poet", "playwright", "novelist", "composer", "engineer", "inventor", "discoverer", "designer", "founder",
    "creator", "director", "builder", "scientist", "physicist", "chemist", "astronomer", "mathematician",
    "naturalist", "biologist", "philosopher", "explorer", "emperor", "empress", "king", "queen", "pharaoh",
    "president", "ruler", "leader", "general", "pope", "saint", "husband", "wife", "father", "mother", "son",
    "daughter", "brother", "sister", "teacher", "student", "pupil", "successor", "predecessor", "owner",
    "musician", "singer", "actor", "prophet", "sultan", "tsar", "czar", "monarch", "prince", "princess",
    "dictator", "governor", "commander", "admiral", "astronaut", "botanist", "physician", "economist",
    "historian", "theologian", "geologist", "navigator", "conqueror",
}
# Role words that reach a subject through another thing: "the company that built Y" too.
RELATION_NOUNS = PERSON_NOUNS | {"company", "firm", "organization", "organisation", "band", "team", "country",
                                 "nation", "state", "city", "dynasty", "empire", "element", "planet", "star",
                                 "language", "religion", "university", "school", "party", "ship", "book",
                                 "novel", "work", "painting", "opera", "symphony", "capital", "studio",
                                 "institution", "group", "family", "army", "house", "club"}
_PERSON_SUFFIX = re.compile(r"^[a-z]{3,}(?:ist|ian|man|woman|tor|sor|ess)$")
# fmt: on


def is_person_noun(noun: str) -> bool:
    """A noun for a person: a role of the list, or one by its ending ("statesman", "physicist",
    "director", "musician")."""
    return noun in PERSON_NOUNS or bool(_PERSON_SUFFIX.match(noun))


def is_role(noun: str, kinds: AbstractSet[str] | None) -> bool:
    """Can the noun name a thing of its own that the question reaches through a role? A kind of thing
    the search backend's documents are (`kinds`: deepresearch.understanding.linking.kinds_for), or,
    without them, one of the common roles; never a time or a measure, which are asked of a thing."""
    if noun in TIME_NOUNS or noun in MEASURE_NOUNS or noun in NAMING_NOUNS or noun in PART_NOUNS:
        return False
    return noun in RELATION_NOUNS or is_person_noun(noun) or (kinds is not None and noun in kinds)


# fmt: off
# Words that shape what a section answers; never concepts of their own.
ASPECTS = set("""
origin origins cause causes belief beliefs use uses usage construction effect effects history histories
influence influences legacy purpose purposes role roles impact impacts development developments feature
features function functions benefit benefits advantage advantages disadvantage disadvantages structure
structures teaching teachings practice practices tradition traditions meaning significance design designs
culture cultures economy geography climate habitat diet behaviour behavior characteristic characteristics
type types application applications principle principles idea ideas theory theories method methods
achievement achievements contribution contributions life lives career works work reception criticism
""".split())
# fmt: on


# fmt: off
# Words that single a thing out of its kind: "the largest moon of ..."
DESCRIPTORS = set("""
largest smallest biggest highest lowest tallest shortest longest deepest fastest slowest oldest youngest
earliest latest first last only hottest coldest brightest heaviest lightest nearest closest farthest furthest
greatest most least best worst richest poorest widest densest loudest
""".split())
# fmt: on
