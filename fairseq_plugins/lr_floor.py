"""``--lr-scheduler reduce_lr_on_plateau_floor``: fairseq's ``reduce_lr_on_plateau`` with ``--lr-floor``.

The space-as-token paper's pretraining schedule (Table 9) warms up linearly to 5e-4 for 10,000 updates, "then
reduce[s] to 1e-4 upon increased training loss at epoch": ``--lr-shrink 0.2 --lr-patience 0 --lr-floor 1e-4``
multiplies the lr by 0.2 at the first epoch whose loss does not improve on the best so far, and never lower, so
the lr is reduced exactly once.  The loss is the one fairseq hands its schedulers at the end of an epoch (the
validation loss; see ``train_scripts/pretrain_roberta.sh``).
"""
from dataclasses import dataclass, field

from fairseq.optim.lr_scheduler import register_lr_scheduler
from fairseq.optim.lr_scheduler.reduce_lr_on_plateau import (
    ReduceLROnPlateauLRSchedule,
    ReduceLROnPlateauLRScheduleConfig,
)


@dataclass
class ReduceLROnPlateauFloorConfig(ReduceLROnPlateauLRScheduleConfig):
    lr_floor: float = field(default=0.0, metadata={"help": "the lr is never reduced below this value"})


@register_lr_scheduler("reduce_lr_on_plateau_floor", dataclass=ReduceLROnPlateauFloorConfig)
class ReduceLROnPlateauFloorSchedule(ReduceLROnPlateauLRSchedule):
    def __init__(self, cfg, optimizer):
        super().__init__(cfg, optimizer)
        self.lr_scheduler.min_lrs = [cfg.lr_floor] * len(self.lr_scheduler.min_lrs)
