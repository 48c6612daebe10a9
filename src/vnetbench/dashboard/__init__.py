"""The live dashboard (issue 16): campaigns with progress, a MaDDash-style grid of every pair coloured by
thresholds, each pair's series over the campaign, the static report one click away.

`create_app(store_url, token=..., report_dir=...)` gives the FastAPI app; `vnetbench dashboard` serves it
with uvicorn, and `vnetbench monitor` serves the same app with its own routers added.
"""

from vnetbench.dashboard.app import create_app

__all__ = ["create_app"]
