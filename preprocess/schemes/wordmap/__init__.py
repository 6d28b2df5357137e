"""Wordmap: lexicalised segmentation of German verbs (Jung 2023, BA thesis, section 3.2.1).

The thesis is the only specification (no reference code was published).  This package implements

* :func:`extract_verbs` -- verb forms (HanTa tags ``VV*``, ``VA*``, ``VM*``) from German sentences,
  optionally augmented with a user word list;
* :func:`build_vocabulary` -- Algorithm 1 (Wordmap generation) for every verb type against every other verb
  type, the map-cleaning regex, summed positional maps, z-score segment detection, the functional/lexemic split
  and the outlier and interference rules; the result is a :class:`WordmapVocabulary` saved as plain text;
* :func:`segment` -- Algorithm 2 (all complete left-to-right segmentations from the vocabulary) and the choice by
  the maximisation function, eq. (3.1);
* :class:`WordmapTokenizer` -- reversible sentence tokenisation: HanTa tags the sentence, verbs are segmented
  with Wordmap, every other word with a base SentencePiece model;
* ``python -m preprocess.schemes.wordmap build ...`` and the ``preprocess.encode --scheme wordmap`` hooks.

Interpretation of the points the thesis leaves open or contradicts (each one is a decision of this package)
--------------------------------------------------------------------------------------------------------------
1. **Maps have the length of the target.**  Every verb ``v`` is aligned with the target at the end(s) where the
   first/last characters agree.  Left match: ``target[i]`` vs ``v[i]``; right match: ``target[-1-i]`` vs
   ``v[-1-i]``; positions of the target that ``v`` does not reach are the zero padding.  Equal lengths give one
   map (the ``else`` branch of Algorithm 1) even when both ends match.  This reproduces all rows of Table 2
   (``verstehen``: ``verarbeiten`` -> 111000000 and 001000011, ``variiert`` -> 101001000, ``vormachen`` ->
   101000111, ``anstrebtest`` -> no map).  The target itself is not compared with itself; duplicates are
   removed (``verbs`` is a set, lower-cased, letters only: ``^[a-zäöüß]+$`` after lower-casing).
2. **Cleaning regex.**  Only the run of 1s touching the start and the run touching the end of a map stay; every
   other 1 becomes 0 (``11101100101`` -> ``11100000001``, the thesis's example).
3. **Syllables.**  Syllable nuclei are counted with a naive regex that treats the diphthongs ``au äu eu ei ai
   ie`` as one nucleus (the thesis calls ``anschauen`` 3-syllabic, so single-vowel counting cannot be meant).
   Targets with at most 2 syllables are "only analysed to the right": the leading runs of their maps are
   dropped, so they can get a suffix but never a prefix.
4. **Which side of z = 0 is functional.**  The text says "any segment below a z-score of zero is detected" and
   then calls the detected segments affixes, but its own Figures 3 and 4 show the opposite: the functional
   segments (``t`` of ``viertelt``; ``an`` and ``en`` of ``anschauen``) lie *above* the zero line and the
   lexemic part below it.  Following the figures, the **prefix** is the run of positions from the start with
   z > 0, the **suffix** is the run of positions up to the end with z > 0, and everything in between (including
   any interior position with z > 0) is the lexemic segment.  z uses the sample standard deviation (ddof = 1);
   a target whose summed map is constant (or shorter than 2) has no affixes and is lexemic as a whole.
5. **Outliers.**  "Drops every string longer than 2.5 times the standard deviation" is read as a z-score rule on
   string lengths (drop when ``len > mean + 2.5 * sd``); read literally (``len > 2.5 * sd``, with sd ~ 1) it
   would drop every affix longer than two characters, including ``ver``, and contradict the thesis's report
   that the functional vocabulary holds adverbials and prepositions.  Likewise the lexemic rule is
   ``len > mean + 2 * MAD`` (mean absolute deviation around the mean).  Means and deviations are taken over
   the distinct strings of each vocabulary (types).  Interference: lexemic strings shorter than the mean
   length of the (cleaned) functional strings are removed.  The joined vocabulary keeps, for every string, its
   kind (functional, lexemic or both) and how many verbs produced it.
6. **Algorithm 2.**  Vocabulary pieces must be longer than one character; a single character may only close a
   segmentation ("incomplete segmentations that miss exactly one character to the right are accepted").  The
   whole word is a valid segmentation when it is itself in the vocabulary.  A word without any complete
   segmentation is returned whole.  Eq. (3.1) is ``f(s) = sum_i ((s_i / t) / |s|) ** (1 / s_i)`` with ``s_i``
   the length of piece i, ``t`` the word length and ``|s|`` the number of pieces.  f depends only on the
   multiset of piece lengths, so :func:`segment` enumerates the reachable length multisets with memoisation
   instead of every permutation (same argmax as the exhaustive search of :func:`segmentations`; tested).
   Ties (same length multiset) are broken by the larger sum of ``log(count)`` of the pieces, then by the
   lexicographically smallest piece tuple.  Words longer than :data:`MAX_SEGMENT_LEN` characters are returned
   whole.
7. **Case.**  Vocabulary and segmentation work on lower case; :func:`segment` maps the pieces back onto the
   original spelling, so a capitalised verb at sentence start keeps its capital.

Tokenised text uses the SentencePiece convention: a piece that starts a whitespace-separated word carries the
prefix ``▁``; Wordmap continuation pieces are marked by having no ``▁`` (``spielt`` -> ``▁spiel t``), and so are
punctuation marks glued to a verb.  :func:`decode_line` joins the pieces and turns ``▁`` into spaces, which
restores the input up to whitespace normalisation (runs of whitespace become one space, ends are trimmed).  A
literal ``▁`` (U+2581) in the input reads back as a space, exactly as with SentencePiece itself.

The package's modules, one job each, in layer order (each imports only modules listed before it; the one import
the other way is made at call time, in :func:`~preprocess.schemes.wordmap.segmentation.segmentations`):

* :mod:`~preprocess.schemes.wordmap.maps` -- Algorithm 1: Wordmaps, cleaning, positional counts, the z-score split;
* :mod:`~preprocess.schemes.wordmap.segmentation` -- Algorithm 2 and eq. (3.1);
* :mod:`~preprocess.schemes.wordmap.vocabulary` -- :class:`WordmapVocabulary`: the functional/lexemic split, the outlier
  and interference rules, its file;
* :mod:`~preprocess.schemes.wordmap.tagging` -- HanTa tagging and verb extraction;
* :mod:`~preprocess.schemes.wordmap.tokenizer` -- :class:`WordmapTokenizer`, :func:`decode_line`, the base
  SentencePiece model;
* :mod:`~preprocess.schemes.wordmap.hooks` -- :class:`WordmapOptions`, :func:`make_encoder` and the scheme's ``SCHEME``;
* :mod:`~preprocess.schemes.wordmap.command` -- ``python -m preprocess.schemes.wordmap`` (``morphtok-wordmap``).

This ``__init__`` re-exports the public API (``__all__``); the rest is imported from its module.
"""
from preprocess.schemes.wordmap.command import cli, main
from preprocess.schemes.wordmap.hooks import SCHEME, WordmapOptions, add_encoder_args, make_encoder
from preprocess.schemes.wordmap.maps import DEFAULT_SPLIT, SPLIT_MODES
from preprocess.schemes.wordmap.segmentation import segment
from preprocess.schemes.wordmap.tagging import extract_verbs, extract_verbs_file, load_tagger
from preprocess.schemes.wordmap.tokenizer import WordmapTokenizer, decode_line, segmenter_pieces, train_spm
from preprocess.schemes.wordmap.vocabulary import WordmapVocabulary, build_vocabulary

#: this scheme's command-line tools, installed by setup.py (preprocess/scheme_scripts.py reads the literal)
CONSOLE_SCRIPTS = {"morphtok-wordmap": "preprocess.schemes.wordmap", "morphtok-metrics-wordmap": "preprocess.evaluate.wordmap"}

__all__ = ["SCHEME", "WordmapOptions", "add_encoder_args", "make_encoder", "WordmapTokenizer", "decode_line",
           "WordmapVocabulary", "build_vocabulary", "segment", "segmenter_pieces", "extract_verbs",
           "extract_verbs_file", "load_tagger", "train_spm", "DEFAULT_SPLIT", "SPLIT_MODES", "main", "cli"]
