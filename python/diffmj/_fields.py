"""The array type of diffmj's read-only model fields (integer structure: ids, addresses,
counts, types). ``diffmj.Model`` hands these out; writing one raises ``ValueError`` naming the
field instead of numpy's anonymous "assignment destination is read-only"."""

import numpy as np


class ReadOnlyField(np.ndarray):
    """A read-only copy of an integer ``mjModel`` field. Reading works as on any numpy array
    (arithmetic gives plain arrays); item assignment and in-place operators raise
    ``ValueError`` naming the field. ``.copy()`` gives a writable array."""

    field_name = None

    def __new__(cls, array, name):
        obj = np.asarray(array).view(cls)
        obj.field_name = name
        obj.flags.writeable = False
        return obj

    def __array_finalize__(self, obj):
        self.field_name = getattr(obj, "field_name", None)

    def _refuse(self):
        raise ValueError(
            f"mjModel field {self.field_name!r} is integer structure (ids, addresses, counts, "
            "types) and is read-only in diffmj: change the MJCF and compile again"
        )

    def __setitem__(self, key, value):
        if not self.flags.writeable:
            self._refuse()
        super().__setitem__(key, value)

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if out is not None:
            for o in out:
                if isinstance(o, ReadOnlyField) and not o.flags.writeable:
                    o._refuse()
            kwargs["out"] = tuple(np.asarray(o) for o in out)

        def plain(x):
            return np.asarray(x) if isinstance(x, ReadOnlyField) else x

        return getattr(ufunc, method)(*(plain(x) for x in inputs), **kwargs)
