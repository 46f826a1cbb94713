"""Reading the provenance page (deepresearch provenance --html) in tests."""

from html.parser import HTMLParser


class Page(HTMLParser):
    """The tags of a page, its script text, and per chain div its steps' text."""

    def __init__(self):
        super().__init__()
        self.tags, self.scripts, self.chains, self.sentences = [], [], {}, {}
        self._chain = self._in = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        if tag == "div" and (a.get("id") or "").startswith("chain-"):
            self._chain = int(a["id"][6:])
            self.chains[self._chain] = []
        if tag == "span" and a.get("class") == "s":
            self._in, self._text = ("s", int(a["data-i"])), []
        if tag == "li" and self._chain is not None:
            self._in, self._text = ("li", a.get("class")), []
        if tag == "script":
            self._in, self._text = ("script", None), []

    def handle_endtag(self, tag):
        if self._in and tag == {"s": "span", "li": "li", "script": "script"}[self._in[0]]:
            text = "".join(self._text)
            if self._in[0] == "s":
                self.sentences[self._in[1]] = text
            elif self._in[0] == "li":
                self.chains[self._chain].append((self._in[1], text))
            else:
                self.scripts.append(text)
            self._in = None

    def handle_data(self, data):
        if self._in:
            self._text.append(data)


def parse(html: str) -> Page:
    p = Page()
    p.feed(html)
    return p
