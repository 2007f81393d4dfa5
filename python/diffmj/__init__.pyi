from ._diffmj import *  # noqa: F401,F403
from ._diffmj import (
    Data as Data,
    DiffmjError as DiffmjError,
    MjcfError as MjcfError,
    Model as Model,
    ModelStruct as ModelStruct,
    Mpc as Mpc,
    ilqr as ilqr,
    ParamHandle as ParamHandle,
    SimulationError as SimulationError,
    inverse_jacobian as inverse_jacobian,
    mj_forward as mj_forward,
    mj_inverse as mj_inverse,
    mj_step as mj_step,
    parameter_jacobian as parameter_jacobian,
    rollout as rollout,
    sysid as sysid,
    trajopt as trajopt,
    transition_jacobian as transition_jacobian,
)
from ._fields import ReadOnlyField as ReadOnlyField

class State:
    TIME: int
    QPOS: int
    QVEL: int
    ACT: int
    HISTORY: int
    WARMSTART: int
    CTRL: int
    QFRC_APPLIED: int
    XFRC_APPLIED: int
    EQ_ACTIVE: int
    MOCAP_POS: int
    MOCAP_QUAT: int
    USERDATA: int
    PLUGIN: int
    PLASTIC: int
    PHYSICS: int
    FULLPHYSICS: int
    USER: int
    INTEGRATION: int
