"""The demo's one language-model pipeline: binarise -> pretrain -> prepare -> fine-tune -> score, shared by the
parts that pretrain a RoBERTa per row (the pretraining part and the German part).

``plan.py``: its typed settings (:class:`~train_scripts.demo.lm.plan.Settings`), the fine-tuning tasks
(:class:`~train_scripts.demo.lm.plan.Task`) and :class:`~train_scripts.demo.lm.plan.Plan`, the paths and command of
every step; ``pipeline.py``: the steps as resumable stages on the demo's scheduler and the results they leave.  A
part hands the pipeline its rows, its tasks and its own data step and scores (a subclass's hooks); the pipeline
imports no part.
"""
