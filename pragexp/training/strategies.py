"""Lightning's DDP strategy, for models with nothing to optimise too.

DistributedDataParallel refuses a module without a parameter that requires a gradient, and Lightning wraps
the module whenever it fits. The models that learn nothing by gradients (the majority baseline, which
`fit` only shows the training labels once) run unwrapped, as Lightning runs every model when it only
evaluates: there are no gradients to average, and the process group is there for their own collectives.
"""

from __future__ import annotations

from pytorch_lightning.strategies import DDPStrategy as LightningDDPStrategy


class DDPStrategy(LightningDDPStrategy):
    def configure_ddp(self) -> None:
        if any(p.requires_grad for p in self.model.parameters()):
            super().configure_ddp()
