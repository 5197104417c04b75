# Mutant: does not restart the count after growing, so it grows again on every later clean step
# replaces: LossScaler
# must fail: test_LossScaler, hidden_LossScaler
import torch


class LossScaler:
    def __init__(self, init_scale=2.0**16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000):
        if not init_scale > 0 or not growth_factor > 1 or not 0 < backoff_factor < 1:
            raise ValueError("invalid loss-scaling parameters")
        if growth_interval != int(growth_interval) or growth_interval < 1:
            raise ValueError(f"growth_interval must be a positive whole number, got {growth_interval}")
        self._scale = torch.tensor(float(init_scale), dtype=torch.float32)
        self.growth_factor = float(growth_factor)
        self.backoff_factor = float(backoff_factor)
        self.growth_interval = int(growth_interval)
        self._clean_steps = 0

    @property
    def scale(self):
        return self._scale.item()

    def unscale_and_check(self, grads):
        inv_scale = self._scale.double().reciprocal().float()
        found = False
        with torch.no_grad():
            for g in grads:
                if g is None:
                    continue
                found = found or not bool(torch.isfinite(g).all())
                g.mul_(inv_scale.to(g.device))
        return found

    def update(self, found_inf):
        if found_inf:
            self._scale = (self._scale.double() * self.backoff_factor).float()
            self._clean_steps = 0
            return
        self._clean_steps += 1
        if self._clean_steps >= self.growth_interval:
            grown = (self._scale.double() * self.growth_factor).float()
            if torch.isfinite(grown):
                self._scale = grown
