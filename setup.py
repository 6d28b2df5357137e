import hashlib
import os
import runpy

from setuptools import Extension, find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))

#: the command-line tools people type that are no scheme's; each is also `python -m MODULE`.  A scheme's own tools
#: (morphtok-bite, morphtok-metrics-bite...) are listed in its module's CONSOLE_SCRIPTS (preprocess/scheme_scripts.py)
CONSOLE_SCRIPTS = {
    # preprocessing (fairseq-free)
    "morphtok-encode": "preprocess.encode",              # any scheme, order-preserving, multi-process
    "morphtok-spm": "preprocess.models.spm",                    # train SentencePiece / write its fairseq dict.txt
    "morphtok-export": "preprocess.export",              # Hugging Face tokenizer directory (extra: hf)
    # intrinsic metrics
    "morphtok-metrics-morph": "preprocess.evaluate.morph",
    "morphtok-noise": "preprocess.evaluate.noise",       # perturbed test sets, similarity
    "morphtok-metrics-intrinsic": "preprocess.evaluate.intrinsic",  # Rényi efficiency, fertility (extra: hf)
    # recipes
    "morphtok-prepare-wmt": "train_scripts.prepare_wmt",
    "morphtok-prepare-wikipedia": "train_scripts.prepare_wikipedia",   # English Wikipedia dump -> LM corpus
    "morphtok-binarize": "train_scripts.binarize",
    "morphtok-lm-filter": "train_scripts.lm_filter",
    "morphtok-launch": "train_scripts.launch",            # submitit: sharded preprocessing, multi-node training
    "morphtok-average": "train_scripts.average_checkpoints",
    "morphtok-evaluate": "train_scripts.evaluate",
    "morphtok-translate": "train_scripts.translate",     # raw text, each side encoded with its own scheme
    "morphtok-significance": "train_scripts.significance",
    "morphtok-classification-data": "train_scripts.classification_data",
    "morphtok-multiseed": "train_scripts.multiseed",
    "morphtok-train-log": "train_scripts.train_log",
    "morphtok-demo": "train_scripts.demo.main",                # make demo
    "morphtok-report": "train_scripts.demo.translation.report",
}


def console_scripts() -> dict:
    """CONSOLE_SCRIPTS and every scheme's own (read from the scheme modules' source: nothing is installed yet)."""
    return runpy.run_path(os.path.join(HERE, "preprocess", "scheme_scripts.py"))["console_scripts"](HERE)


#: pure-Python modules compiled with Cython where it and a C compiler exist: source -> compiled module (each module
#: uses its compiled twin only when the twin records the source's current SHA-256)
COMPILED = {"preprocess/schemes/flota/search.py": "preprocess.schemes.flota._search",   # FLOTA's search
            "preprocess/tagging/hanta_fast.py": "preprocess.tagging._hanta_fast",    # exact HanTa tagging (Wordmap, BITE --tagger hanta)
            "preprocess/tagging/perceptron_fast.py": "preprocess.tagging._perceptron_fast"}   # NLTK's perceptron tagging (BITE, default)


def compiled_extensions() -> list:
    """The modules of COMPILED (FLOTA's search, HanTa's and NLTK's tagging loops) compiled with Cython (as fairseq compiles its data utilities), each from a copy that records the source's SHA-256
    so that a stale build is never used.  Optional: without Cython or a C compiler the package installs and runs the
    same code as plain Python."""
    try:
        from Cython.Build import cythonize
    except ImportError:
        return []
    extensions = []
    for source, module in COMPILED.items():
        with open(source, "rb") as fh:
            text = fh.read()
        copy = os.path.join("build", "cython", *module.split(".")) + ".py"
        os.makedirs(os.path.dirname(copy), exist_ok=True)
        with open(copy, "wb") as fh:
            fh.write(text + b"\nSOURCE_SHA256 = %r\n" % hashlib.sha256(text).hexdigest())
        extension, = cythonize([Extension(module, [copy])], compiler_directives={"language_level": 3}, quiet=True)
        extension.optional = True   # a failed C compile is a warning (cythonize does not carry this flag over)
        extensions.append(extension)
    return extensions


setup(
    name="morphtok-fairseq",
    version="0.1.0",
    description="Morphology-aware tokenisation schemes (space-as-token, BITE, FLOTA, Wordmap) for fairseq",
    packages=find_packages(HERE, include=["fairseq_plugins", "fairseq_plugins.*", "preprocess", "preprocess.*",
                                          "train_scripts", "train_scripts.*"]),
    python_requires=">=3.10",   # torch 2.13, which the install takes, needs 3.10
    install_requires=[
        "sentencepiece", "sacrebleu", "sacremoses", "lemminflect", "nltk", "HanTa", "tqdm", "matplotlib",
        "submitit", "scipy", "scikit-learn", "tensorboardX", "mwparserfromhell", "blingfire",
    ],
    ext_modules=compiled_extensions(),
    extras_require={"fairseq": ["fairseq-fixed==0.12.3.1"], "test": ["pytest"],
                    # morphtok-export / morphtok-metrics-intrinsic (docs/export.md)
                    "hf": ["tokenizers", "transformers", "protobuf", "tokenization-scorer"]},
    entry_points={"console_scripts": [f"{name} = {module}:cli" for name, module in console_scripts().items()]},
)
