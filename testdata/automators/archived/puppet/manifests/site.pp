# A manifest that uses a module from the archive's module path.
include greet
