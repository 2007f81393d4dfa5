"""Type stubs of the compiled module diffmj._diffmj (re-exported by ``diffmj``)."""
from os import PathLike
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str
STATE_MASKS: Dict[str, int]

_F = npt.NDArray[np.float64]
_ArrayLike = npt.ArrayLike
_ParamLike = Union["ParamHandle", str]

class DiffmjError(Exception):
    """Base class of diffmj's errors."""

class MjcfError(DiffmjError):
    """An MJCF model could not be read or compiled; the message starts with file:line:column."""

class SimulationError(DiffmjError):
    """The simulation diverged or failed."""

class ParamHandle:
    """A model parameter ``KIND NAME FIELD[INDEX]`` (``Model.param``)."""
    @property
    def name(self) -> str: ...
    @property
    def slots(self) -> List[Tuple[str, int, float]]: ...

class ModelStruct:
    """``Model.opt`` and ``Model.stat`` (MuJoCo's ``mjModel.opt``, ``mjModel.stat``): real
    options as floats or the model's writable arrays (``opt.timestep``, ``opt.gravity``), the
    integer options (``integrator``, ``solver``, ``cone``, ``iterations``, ...) as MuJoCo's
    codes; writes go to the model."""
    def __getattr__(self, name: str) -> Any: ...
    def __setattr__(self, name: str, value: Any) -> None: ...

class Model:
    """A compiled MJCF model (``mjModel``). Every field is an attribute under MuJoCo's name
    (``body_mass``, ``geom_friction``, ``jnt_type``; ``opt.gravity`` also as ``opt_gravity``).
    Real fields are the model's writable numpy arrays, as in MuJoCo: ``m.body_mass[1] = 2.0``
    changes the next step of every ``Data`` of the model; the written value is used as written
    (derived constants such as ``body_subtreemass`` are not recomputed; ``set_param`` does
    recompute them). Integer fields (ids, addresses, types) are read-only copies and counts
    (``nq``, ``nv``, ...) ints: writing them raises ``ValueError``/``AttributeError`` naming
    the field. A model pickles with its written values."""
    nq: int
    nv: int
    nu: int
    na: int
    nbody: int
    njnt: int
    ngeom: int
    nsite: int
    nsensordata: int
    nkey: int
    opt_timestep: float
    body_mass: _F
    body_inertia: _F
    geom_friction: _F
    geom_solref: _F
    geom_solimp: _F
    dof_damping: _F
    dof_armature: _F
    jnt_stiffness: _F
    actuator_gear: _F
    actuator_gainprm: _F
    actuator_biasprm: _F
    actuator_ctrlrange: _F
    qpos0: _F
    @property
    def opt(self) -> ModelStruct: ...
    @property
    def stat(self) -> ModelStruct: ...
    @staticmethod
    def from_xml_path(path: Union[str, PathLike[str]]) -> "Model": ...
    @staticmethod
    def from_xml_string(xml: str) -> "Model": ...
    def __init__(self, xml: str = "") -> None: ...
    @property
    def xml(self) -> str: ...
    def param(self, text: str) -> ParamHandle: ...
    def get_param(self, p: _ParamLike) -> float: ...
    def set_param(self, p: _ParamLike, value: float) -> None: ...
    def set_option(self, key: str, value: str) -> None: ...
    def size(self, name: str) -> int: ...
    def name2id(self, kind: str, name: str) -> int: ...
    def field_names(self) -> List[str]: ...
    def writable_field_names(self) -> List[str]: ...
    def field(self, name: str) -> Any: ...
    def __getattr__(self, name: str) -> Any: ...
    def __setattr__(self, name: str, value: Any) -> None: ...

class Data:
    """Simulation state and derived quantities (``mjData``). Fixed-size arrays are writable
    numpy views (``qpos``, ``qvel``, ``ctrl``, ``xpos``, ...); ``efc_*`` arrays are copies."""
    time: float
    qpos: _F
    qvel: _F
    qacc: _F
    act: _F
    ctrl: _F
    qfrc_applied: _F
    xfrc_applied: _F
    qfrc_inverse: _F
    qfrc_bias: _F
    qfrc_actuator: _F
    actuator_force: _F
    sensordata: _F
    xpos: _F
    xquat: _F
    efc_force: _F
    def __init__(self, model: Model) -> None: ...
    @property
    def model(self) -> Model: ...
    @property
    def ncon(self) -> int: ...
    @property
    def nefc(self) -> int: ...
    def step(self, nstep: int = 1) -> None: ...
    def forward(self) -> None: ...
    def inverse(self) -> None: ...
    def reset(self) -> None: ...
    def reset_keyframe(self, key: Union[int, str]) -> None: ...
    def get_state(self, mask: int = ...) -> _F: ...
    def set_state(self, state: _ArrayLike, mask: int = ...) -> None: ...
    def state_size(self, mask: int = ...) -> int: ...
    def full_m(self) -> _F: ...
    def copy(self) -> "Data": ...
    def field_names(self) -> List[str]: ...
    def __getattr__(self, name: str) -> _F: ...

def rollout(
    model: Model,
    initial_state: _ArrayLike,
    control: Optional[_ArrayLike] = None,
    nstep: Optional[int] = None,
    threads: int = 0,
    state_mask: int = ...,
    control_mask: int = ...,
) -> _F: ...
def transition_jacobian(
    model: Model, data: Data, method: str = "ad", eps: float = 1e-6, centered: bool = False,
    sensors: bool = False,
) -> Tuple[_F, ...]: ...
def inverse_jacobian(
    model: Model, data: Data, method: str = "ad", eps: float = 1e-6, centered: bool = False,
    sensors: bool = False, actuation: bool = False,
) -> Dict[str, _F]: ...
def parameter_jacobian(
    model: Model, data: Data, params: Sequence[_ParamLike], method: str = "ad",
    eps: float = 1e-6, centered: bool = False, sensors: bool = False,
) -> Any: ...
def mj_step(model: Model, data: Data, nstep: int = 1) -> None: ...
def mj_forward(model: Model, data: Data) -> None: ...
def mj_inverse(model: Model, data: Data) -> None: ...

class IlqrResult:
    """What ``ilqr`` returns (a ``types.SimpleNamespace``)."""
    states: _F
    ctrl: _F
    gains: _F
    cost: float
    horizon: int
    iterations: int
    converged: bool
    reason: str
    cost_history: _F
    mu_history: _F
    seconds: float
    derivative_seconds: float
    warnings: dict[str, int]

def ilqr(
    model: Model, data: Data, ctrl: _ArrayLike,
    running_weight: Optional[Sequence[float]] = None,
    terminal_weight: Optional[Sequence[float]] = None,
    control_weight: Optional[Sequence[float]] = None,
    goal: Optional[Sequence[float]] = None,
    terminal_goal: Optional[Sequence[float]] = None,
    control_ref: Optional[Sequence[float]] = None,
    wrap_hinges: bool = True, max_iterations: int = 200, tolerance: float = 1e-7,
    method: str = "ad", eps: float = 1e-6, centered: bool = False, ddp: bool = False,
    threads: int = 0, max_seconds: float = ...,
    positions: Optional[Sequence[dict]] = None,
) -> IlqrResult: ...

class Mpc:
    """Model-predictive control around iLQR."""
    def __init__(
        self, model: Model, horizon: int = 100, replan_every: int = 1,
        running_weight: Optional[Sequence[float]] = None,
        terminal_weight: Optional[Sequence[float]] = None,
        control_weight: Optional[Sequence[float]] = None,
        goal: Optional[Sequence[float]] = None,
        terminal_goal: Optional[Sequence[float]] = None,
        control_ref: Optional[Sequence[float]] = None,
        wrap_hinges: bool = True, max_iterations: int = 3, method: str = "ad",
        threads: int = 0, max_seconds: float = ...,
        positions: Optional[Sequence[dict]] = None,
    ) -> None: ...
    def warm_start(self, result: Any) -> None: ...
    def control(self, data: Data) -> _F: ...
    @property
    def last_step(self) -> Tuple[bool, int, float, float]: ...
    def plan(self) -> Optional[Any]: ...

def sysid(
    model: Model, params: Sequence[Tuple[Any, ...]], trajectories: Sequence[Dict[str, _ArrayLike]],
    estimator: str = "inverse", target: str = "states", segment_steps: int = 10,
    max_iters: int = 100,
) -> Any: ...

def trajopt(
    model: Model, horizon: int, terms: Sequence[Dict[str, Any]],
    qpos0: Optional[Sequence[float]] = None, qvel0: Optional[Sequence[float]] = None,
    init: Optional[_ArrayLike] = None, max_iterations: Optional[int] = None, threads: int = 0,
    smoothing: Optional[Sequence[float]] = None, outer_iterations: Optional[int] = None,
    method: str = "ad", ctrl_range_scale: Optional[Sequence[float]] = None,
    unactuated_tol: Optional[float] = None, ctrl_limit_tol: Optional[float] = None,
) -> Any: ...
