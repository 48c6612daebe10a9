"""The campaign spec: models, units, loading with located errors."""

from vnetbench.spec.loader import LoadedSpec, SpecError, SpecInvalid, load_spec, parse_spec
from vnetbench.spec.models import Campaign

__all__ = ["Campaign", "LoadedSpec", "SpecError", "SpecInvalid", "load_spec", "parse_spec"]
