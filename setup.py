from setuptools import setup

setup(
    name="morphtok-fairseq",
    version="0.1.0",
    description="Morphology-aware tokenisation schemes (space-as-token, BITE, FLOTA, Wordmap) for fairseq",
    packages=["fairseq_plugins", "preprocess", "preprocess.evaluate", "train_scripts"],
    python_requires=">=3.9",
    install_requires=[
        "sentencepiece", "sacrebleu", "sacremoses", "lemminflect", "nltk", "HanTa", "tqdm", "matplotlib",
        "submitit", "scipy",
    ],
    extras_require={"fairseq": ["fairseq-fixed==0.12.3.1"], "test": ["pytest"]},
    entry_points={"console_scripts": []},
)
