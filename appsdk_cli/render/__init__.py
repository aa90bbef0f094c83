"""How a person (rich) or a script (--json) sees a result, one module per capability. Nothing else in appsdk prints."""
