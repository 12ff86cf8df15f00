"""Stop words that keyword extraction skips: small built-in lists for English, German, French and
Spanish (the few hundred most frequent function words), and for the other languages the
`stop-words` package's lists (about 30 languages: Italian, Portuguese, Swedish, Russian...).
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["STOPWORDS", "stopwords_for"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_EN = _words(
    """
    a about above after again against all almost also although am among an and another any anyone
    anything are around as at be because been before being below between both but by can cannot
    could did do does doing done down during each either else enough etc even ever every few for
    from further get gets got had has have having he her here hers herself him himself his how
    however i if in into is it its itself just least less let like made make many may me might
    more most much must my myself neither never no nor not now of off often on once one only or
    other others our ours ourselves out over own per perhaps please quite rather really said same
    say says see seen shall she should since so some something still such than that the their
    theirs them themselves then there these they this those though through thus to too under until
    up upon us use used using very via was way we well were what whatever when where whether which
    while who whom whose why will with within without would yet you your yours yourself yourselves
    can't don't doesn't didn't couldn't wouldn't shouldn't isn't aren't wasn't weren't won't
    haven't hasn't hadn't it's i'm i've i'll i'd you're you've you'll we're we've we'll they're
    they've they'll he's she's that's there's what's let's
    """
)

_DE = _words(
    """
    aber alle allem allen aller alles als also am an ander andere anderem anderen anderer anderes
    auch auf aus bei beim bin bis bist da damit dann das dass dazu dein deine dem den denn der des
    dessen deshalb dich die dies diese diesem diesen dieser dieses dir doch dort du durch ein eine
    einem einen einer eines einige er es etwas euch euer eure für gegen gewesen hab habe haben hat
    hatte hatten hier hin hinter ich ihm ihn ihnen ihr ihre ihrem ihren ihrer ihres im in indem ins
    ist jede jedem jeden jeder jedes jetzt kann kein keine keinem keinen keiner können könnte man
    manche mein meine mich mir mit muss musste nach nicht nichts noch nun nur ob oder ohne schon
    sehr sein seine seinem seinen seiner seit sich sie sind so solche soll sollte sondern sowie
    über um und uns unser unsere unter viel vom von vor wann war waren warum was weil weiter welche
    welchem welchen welcher welches wenn wer werde werden wie wieder will wir wird wo wurde wurden
    zu zum zur zwar zwischen
    """
)

_FR = _words(
    """
    ai aie aient ainsi alors as au aucun aucune aupres auquel aura aurai auront aussi autre autres
    aux avaient avais avait avec avez avoir avons ayant bien car ce ceci cela celle celles celui
    ces cet cette ceux chaque chez comme comment dans de des donc dont du elle elles en encore
    entre est et étaient était été être eu eux fait faire fois font ici il ils je jusqu la le les
    leur leurs lui ma mais me même mes moi mon ne ni nos notre nous on ont ou où par parce pas peu
    peut plus pour pourquoi quand que quel quelle quelles quels qui quoi sa sans se selon ses
    seulement si sien son sont sous sur ta te tes toi ton tous tout toute toutes très tu un une
    vers voici voilà vos votre vous été déjà aussi après avant
    """
)

_ES = _words(
    """
    al algo algunas algunos ante antes como con contra cual cuando de del desde donde durante el
    ella ellas ellos en entre era eran es esa esas ese eso esos esta estaba estado estamos están
    estar estas este esto estos fue fueron ha había han has hasta hay la las le les lo los más me
    mi mis mucho muchos muy nada ni no nos nosotros nuestra nuestro o otra otras otro otros para
    pero poco por porque que quien se sea ser si sido sin sobre son su sus también tan tanto te
    tiene tienen todo todos tu tus un una uno unos usted ya yo él qué cómo cuál está son puede
    pueden sus cada según entonces aunque
    """
)

STOPWORDS: dict[str, frozenset[str]] = {"en": _EN, "de": _DE, "fr": _FR, "es": _ES}
_ALL: frozenset[str] = frozenset().union(*STOPWORDS.values())
_WITH_EN = {lang: words | _EN for lang, words in STOPWORDS.items()}


def stopwords_for(language: str | None) -> frozenset[str]:
    """Stop words to skip for ``language`` (plus English, which pages of any language quote);
    the four built-in lists when it is unknown or has no list."""
    if language is None:
        return _ALL
    own = _WITH_EN.get(language)
    return own if own is not None else _listed(language)


@lru_cache(maxsize=64)
def _listed(language: str) -> frozenset[str]:
    """The `stop-words` package's list for ``language``, plus English."""
    # imported here: most pages are in a language with a built-in list, and every process starts
    # sooner without it (docs/architecture.md, "Start-up")
    from stop_words import LANGUAGE_MAPPING, get_stop_words

    if language not in LANGUAGE_MAPPING:
        return _ALL
    return frozenset(word.lower() for word in get_stop_words(language)) | _EN
