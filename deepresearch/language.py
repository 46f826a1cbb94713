"""The report's language: detected from the question (py3langid), or named in the context.

`resolve(setting, text)` gives an ISO 639-1 code: the one named (`"fr"`, `"French"`), or with
`"auto"` the language py3langid finds in `text` when it is confident, else English (a short
question such as "Eiffel Tower" cannot be told apart). `rule(code, named)` is the instruction
added to every writing prompt; `translated_summary` writes the report's closing verification line
in the report's language where a translation exists (English otherwise).
"""

from __future__ import annotations

import threading
from functools import lru_cache

from deepresearch.text.safe import echoed

DEFAULT = "en"
CONFIDENCE = 0.7  # below this share of the probability the question's language is not trusted

NAMES = {
    "en": "English",
    "fr": "French",
    "de": "German",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
    "ru": "Russian",
    "uk": "Ukrainian",
    "pl": "Polish",
    "cs": "Czech",
    "sk": "Slovak",
    "sv": "Swedish",
    "da": "Danish",
    "no": "Norwegian",
    "fi": "Finnish",
    "et": "Estonian",
    "lv": "Latvian",
    "lt": "Lithuanian",
    "el": "Greek",
    "tr": "Turkish",
    "hu": "Hungarian",
    "ro": "Romanian",
    "bg": "Bulgarian",
    "hr": "Croatian",
    "sr": "Serbian",
    "sl": "Slovenian",
    "ca": "Catalan",
    "eu": "Basque",
    "gl": "Galician",
    "ar": "Arabic",
    "he": "Hebrew",
    "fa": "Persian",
    "hi": "Hindi",
    "bn": "Bengali",
    "ur": "Urdu",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "vi": "Vietnamese",
    "th": "Thai",
    "id": "Indonesian",
    "ms": "Malay",
    "sw": "Swahili",
}
_BY_NAME = {name.lower(): code for code, name in NAMES.items()}


def code_of(setting: str) -> str | None:
    """The code for a context `language` value other than "auto" (None when unknown)."""
    s = (setting or "").strip().lower()
    if s in NAMES:
        return s
    return _BY_NAME.get(s)


def check(setting: str) -> None:
    """ValueError when the context's `language` is neither "auto" nor a known language."""
    if setting != "auto" and code_of(setting) is None:
        raise ValueError(
            f"unknown language {echoed(setting)}: use 'auto', a code like 'fr' or a name like 'French' "
            f"(known: {', '.join(sorted(NAMES))})"
        )


_lock = threading.Lock()


@lru_cache(maxsize=1)
def _identifier():
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    ident.set_languages(sorted(NAMES))  # the languages a report can be asked in: no rare look-alikes
    return ident


def detect(text: str) -> str:
    """The language of `text` when py3langid is confident, else English."""
    text = " ".join((text or "").split())
    return _detected(text) if text else DEFAULT


@lru_cache(maxsize=128)
def _detected(text: str) -> str:
    """Classified once per text: a run reads its question's language more than once (the clarify
    node for the report, the concept reader for its rules), 0.2 ms each."""
    with _lock:  # set_languages swaps arrays on the shared identifier: load and classify under a lock
        lang, prob = _identifier().classify(text)
    return lang if prob >= CONFIDENCE and lang in NAMES else DEFAULT


def resolve(setting: str, text: str) -> str:
    return detect(text) if (setting or "auto") == "auto" else (code_of(setting) or DEFAULT)


def name(code: str) -> str:
    return NAMES.get(code, code)


def rule(code: str | None, named: bool = False) -> str:
    """The instruction for writing prompts: empty for English detected from an English question
    (the prompts are English already), else 'Write in French.' and so on."""
    if not code or (code == DEFAULT and not named):
        return ""
    return f"Write in {name(code)} (the language of the report), whatever the language of the sources."


def with_rule(prompt: str, code: str | None, named: bool = False) -> str:
    """`prompt` with the language instruction as its last line (unchanged when there is none)."""
    text = rule(code, named)
    return f"{prompt}\n\n{text}" if text else prompt


# --- the closing verification line ---------------------------------------------------------

_SUMMARY = {
    "fr": (
        "Vérification : {n} citations contrôlées dans le texte récupéré : {s} confirmées, {p} partielles, "
        "{u} non vérifiées",
        " ; {c} citation(s) de sources inconnues et {r} lien(s) ou URL non récupérés retirés",
    ),
    "de": (
        "Prüfung: {n} Zitate am abgerufenen Text geprüft: {s} belegt, {p} teilweise, {u} nicht belegt",
        "; {c} Zitat(e) unbekannter Quellen und {r} nicht abgerufene Links oder URLs entfernt",
    ),
    "es": (
        "Verificación: {n} citas comprobadas con el texto recuperado: {s} respaldadas, {p} parciales, "
        "{u} sin verificar",
        "; se quitaron {c} cita(s) de fuentes desconocidas y {r} enlace(s) o URL no recuperados",
    ),
    "it": (
        "Verifica: {n} citazioni controllate sul testo recuperato: {s} confermate, {p} parziali, {u} non verificate",
        "; rimosse {c} citazioni di fonti sconosciute e {r} link o URL non recuperati",
    ),
    "pt": (
        "Verificação: {n} citações conferidas com o texto recuperado: {s} confirmadas, {p} parciais, "
        "{u} não verificadas",
        "; removidas {c} citação(ões) de fontes desconhecidas e {r} link(s) ou URL não obtidos",
    ),
}


def translated_summary(code: str | None, checked: int, counts: dict, removed: list[dict]) -> str | None:
    """The report's closing verification line in the report's language, or None where there is
    no translation (English, and languages without one: the English line is kept)."""
    if code not in _SUMMARY:
        return None
    main, extra = _SUMMARY[code]
    text = main.format(n=checked, s=counts["supported"], p=counts["partial"], u=counts["unsupported"])
    if removed:
        cites = sum(1 for r in removed if r["kind"] == "citation")
        text += extra.format(c=cites, r=len(removed) - cites)
    return text + "."
