"""Settings, read once from the environment (and a `.env` file, if given) into one typed
object nested by part: ``settings.llm``, ``settings.fetch``, ``settings.store``...  (`settings`).

Every variable is documented in the repository's `.env.example`, under the name it has as a
field of its part.  A bad value stops start-up with a message naming the variable, rather
than failing on the first request (`environment`).  Nothing here imports a capability: the
settings say what a user may set, and `assembly.from_settings` makes each capability's option
objects of them (so a new option changes the capability and the assembly, and here only its
part's field).
"""

from mcp_summarizer.config.environment import (
    WEBSUM_ALIASES,
    Environment,
    flat_values,
    load_settings,
    revalidated,
    websum_values,
)
from mcp_summarizer.config.settings import (
    DEFAULT_BASE_URL,
    DEFAULT_FETCH_TOKENS,
    DEFAULT_OUTPUT_TOKENS,
    DEFAULT_USER_AGENT,
    PARTS,
    FailurePolicy,
    LowFidelityPolicy,
    Profile,
    Settings,
)

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_FETCH_TOKENS",
    "DEFAULT_OUTPUT_TOKENS",
    "DEFAULT_USER_AGENT",
    "PARTS",
    "WEBSUM_ALIASES",
    "Environment",
    "FailurePolicy",
    "LowFidelityPolicy",
    "Profile",
    "Settings",
    "flat_values",
    "load_settings",
    "revalidated",
    "websum_values",
]
