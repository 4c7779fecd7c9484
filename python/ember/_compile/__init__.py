"""ember.compile: torch.compile's API on ember. Calls run the user's Python (control flow is
always honored) while elementwise ops and reductions on arrays are deferred; the pending graph
runs as fused kernels from ember.fuse's generator (python/ember/_fusion/) whenever a value is
needed, and anything else runs eagerly at that point, so results always equal eager ember's."""

from ._api import Compiled, CompiledModule, compile

__all__ = ["compile", "Compiled", "CompiledModule"]
