"""diffmj: MuJoCo's physics (same numbers as MuJoCo 4.0) with exact derivatives.

The API follows MuJoCo's Python bindings where MuJoCo has the same function::

    import diffmj
    model = diffmj.Model.from_xml_path("models/cartpole.xml")
    data = diffmj.Data(model)
    data.qpos[1] = 0.3          # a numpy view of the simulation's buffer
    model.dof_damping[1] = 0.1  # model fields are writable as in MuJoCo (used as written)
    data.step(100)              # or diffmj.mj_step(model, data, 100)
    A, B = diffmj.transition_jacobian(model, data)   # exact, mjd_transitionFD's orientation

State masks are MuJoCo's ``mjtState`` bits (``diffmj.State.QPOS``, ``diffmj.State.FULLPHYSICS``,
the same integers as ``mujoco.mjtState``).
"""

from ._diffmj import (  # noqa: F401
    Data,
    DiffmjError,
    MjcfError,
    Model,
    ModelStruct,
    Mpc,
    ParamHandle,
    SimulationError,
    STATE_MASKS,
    __version__,
    ilqr,
    inverse_jacobian,
    mj_forward,
    mj_inverse,
    mj_step,
    parameter_jacobian,
    rollout,
    sysid,
    trajopt,
    transition_jacobian,
)

from ._fields import ReadOnlyField  # noqa: F401


class State:
    """MuJoCo's ``mjtState`` bits: components of a state vector (``Data.get_state``)."""


for _name, _bit in STATE_MASKS.items():
    setattr(State, _name, _bit)
del _name, _bit

__all__ = [
    "Data",
    "DiffmjError",
    "MjcfError",
    "Model",
    "ModelStruct",
    "Mpc",
    "ReadOnlyField",
    "ParamHandle",
    "SimulationError",
    "State",
    "ilqr",
    "inverse_jacobian",
    "mj_forward",
    "mj_inverse",
    "mj_step",
    "parameter_jacobian",
    "rollout",
    "sysid",
    "trajopt",
    "transition_jacobian",
]
