"""Plugins sjc ships for hosts that load third-party code into their own process (Hermes Agent).

Each is a folder of data to the sjc package: ``sjc install HOST`` copies it where the host looks for
plugins. The code in it runs in the host's interpreter, never in sjc's: it imports only the host's
modules and the standard library, and reaches sjc through sjc's own interpreter as a child process.
"""
