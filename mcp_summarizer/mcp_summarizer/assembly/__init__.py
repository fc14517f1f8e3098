"""The service's parts built from the settings: the engine (`engine_setup`), the content store
and the result cache (`store_setup`).  Here, above both `config` and the capabilities, so that
no capability imports the settings."""
