"""The registry of studies: experiment name -> study (see reproduction/study.py).

The list of every study lives above both the engine and the families (the
`studies` package), so that neither imports the other.
"""


class Registry:
    """Studies by name, in the order given."""

    def __init__(self, studies):
        self._studies = {}
        for study in studies:
            if study.name in self._studies:
                raise ValueError("Two studies are named %r." % study.name)
            self._studies[study.name] = study

    def names(self):
        return tuple(self._studies)

    def studies(self):
        return tuple(self._studies.values())

    def get(self, name):
        """The study of --experiment=<name>; ValueError naming the known ones."""
        if name not in self._studies:
            raise ValueError("--experiment=%s is not known; expected one of %s." % (name, ", ".join(self._studies)))
        return self._studies[name]
