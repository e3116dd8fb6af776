"""Setting sjc up in a host: hook entries merged into its settings (``install``, ``hook_entries``,
``settings_file``), Codex's hook trust (``codex_trust``), the config file (``config_file``) and the
checks of ``sjc doctor`` (``doctor``)."""
