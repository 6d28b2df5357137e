"""The German data layer of ``python -m train_scripts.prepare_german`` (see its docstring for the commands and the
files they write), one module per thing it does:

* :mod:`~train_scripts.german_data.inputs`: where the inputs are (:class:`~train_scripts.german_data.inputs.Inputs`)
  and how every output folder is written (all files together, none of them an input);
* :mod:`~train_scripts.german_data.germeval`: the GermEval 2018 reader, the fine-tuning CSVs, the official scores
  and the character n-gram floor;
* :mod:`~train_scripts.german_data.conllu`: the strict CoNLL-U reader (UD German GSD);
* :mod:`~train_scripts.german_data.ud`: the verbs and held-out text of UD German GSD;
* :mod:`~train_scripts.german_data.corpus`: the pretraining corpus and its leakage rules.
"""
