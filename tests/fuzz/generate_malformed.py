#!/usr/bin/env python3
"""Malformed and hostile MJCF files, made by mutating every model of the repository, with
MuJoCo 4.0 as the oracle of what a reader must accept and what it must refuse (issue 28, item 3).

Every model under `models/` is first made self-contained (its includes inlined, as MuJoCo merges
them), then mutated with a seeded random generator:

  truncation, deleted / duplicated elements, deleted / duplicated / unknown attributes, hostile
  numbers (1e400, -1, nan, inf, 0, huge integers, hexadecimal, empty), wrong vector lengths,
  bad / empty / wrong-kind references, unknown elements, bad keywords, elements moved to a wrong
  parent, deep and wide nesting, include graphs (repeat, cycle, missing, empty, wrong root,
  nested), bad bytes (NUL, invalid UTF-8, control characters), XML entities and namespaces.

MuJoCo reads each file in a worker subprocess with a timeout, so that a MuJoCo crash or hang
is recorded (as `crash`/`hang`, and such files are left out) instead of stopping the run.

Two modes:

  sample (default)  writes the fixed-seed CI sample: `tests/golden/malformed/NNNN.xml` (plus
                    the auxiliary files of include mutations) and `manifest.json` with MuJoCo's
                    decision for each; `tests/suite/malformed.rs` loads each with diffmj and asserts
                    the same decision, no panic, no hang, and positioned refusals.
  full              generates `--count` files (default 3000) in a scratch directory, runs MuJoCo
                    and the diffmj command line (`--diffmj`, default target/release/diffmj;
                    `info` for the decision, then a short `rollout` of accepted files) on each in
                    subprocesses with timeouts, and prints the figures: files, accept/refuse
                    agreement, panics, aborts, hangs, refusals without position, and the
                    mismatches by mutation.

    python3 tests/fuzz/generate_malformed.py                       # the CI sample
    python3 tests/fuzz/generate_malformed.py full --count 3000 --diffmj target/release/diffmj
"""

import argparse
import copy
import json
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODELS = os.path.join(ROOT, "models")
GOLDEN = os.path.join(ROOT, "tests", "golden", "malformed")

SAMPLE_SEED = 28
SAMPLE_COUNT = 300
# The CI sample leaves out mutants larger than this, so the golden directory stays small
SAMPLE_MAX_BYTES = 16_000
FULL_SEED = 2028

# ---------------------------------------------------------------------------------------------
# Base models: every model of the repository, includes inlined
# ---------------------------------------------------------------------------------------------

INCLUDE_RE = re.compile(r"<include\s+file\s*=\s*\"([^\"]*)\"\s*/>")


def inline_includes(text, main_dir, seen=None):
    """The model text with each `<include file=.../>` replaced by the children of the included
    file's root (paths relative to the main file's directory, as MuJoCo resolves them)."""
    seen = set() if seen is None else seen

    def repl(m):
        path = os.path.normpath(os.path.join(main_dir, m.group(1)))
        if path in seen:
            return ""
        seen.add(path)
        with open(path, encoding="utf-8") as f:
            inner = f.read()
        inner = re.sub(r"<\?xml[^>]*\?>", "", inner)
        inner = re.sub(r"<!--.*?-->", "", inner, flags=re.S)
        inner = re.sub(r"^\s*<mujoco[^>]*>", "", inner.strip())
        inner = re.sub(r"</mujoco>\s*$", "", inner)
        return inline_includes(inner, main_dir, seen)

    return INCLUDE_RE.sub(repl, text)


def base_models():
    """(relative path, self-contained text) of every model MuJoCo accepts, sorted by path."""
    out = []
    for dirpath, _, files in os.walk(MODELS):
        for f in sorted(files):
            if not f.endswith(".xml"):
                continue
            path = os.path.join(dirpath, f)
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            try:
                text = inline_includes(text, os.path.dirname(path))
                root = ET.fromstring(text)
            except (OSError, ET.ParseError):
                continue
            if root.tag != "mujoco":
                continue
            out.append((os.path.relpath(path, ROOT), ET.tostring(root, encoding="unicode")))
    out.sort()
    return out


# ---------------------------------------------------------------------------------------------
# Mutations: each takes (rng, root element, text) and returns (files, detail) where files maps
# a relative file name ("main" for the model itself) to its bytes, or None when it does not apply
# ---------------------------------------------------------------------------------------------

HOSTILE = [
    "1e400", "-1e400", "1e-400", "-1", "0", "-0", "nan", "NaN", "-nan", "inf", "-inf", "Inf",
    "1e308", "-1e308", "4294967296", "-2147483649", "99999999999999999999", "0x10", "0x",
    "1.5.2", "", " ", "1e", "+", "--1", "1,5", "0.5e+", "infinity", "1_000",
]
REF_ATTRS = {
    "joint", "joint1", "joint2", "body", "body1", "body2", "site", "site1", "site2", "geom",
    "geom1", "geom2", "tendon", "tendon1", "tendon2", "actuator", "mesh", "material", "texture",
    "hfield", "target", "objname", "refname", "class", "childclass", "jointinparent", "slidersite",
    "cranksite", "sidesite", "camera", "skin", "flex",
}
KEYWORD_ATTRS = {
    "type", "integrator", "cone", "jacobian", "solver", "mode", "angle", "coordinate", "inertiafromgeom",
    "autolimits", "limited", "ctrllimited", "forcelimited", "actlimited", "dyntype", "gaintype",
    "biastype", "objtype", "reftype", "builtin", "mark", "fitaabb", "inertia", "trn", "contact",
    "gravity", "warmstart", "energy", "frictionloss", "sensornoise", "actuation", "equality",
    "islands", "damper", "spring", "passive", "constraint", "filterparent", "clampctrl",
    "midphase", "eulerdamp", "refsafe", "limit", "override", "fusestatic", "discardvisual",
    "balanceinertia", "exactmeshinertia", "interp", "orientation", "shape", "actearly",
}
KEYWORDS = ["true", "false", "auto", "enable", "disable", "1", "0", "ball", "hinge", "slide", "free",
            "box", "sphere", "capsule", "Euler", "RK4", "implicit", "implicitfast", "pyramidal",
            "elliptic", "Newton", "CG", "PGS", "fixed", "track", "trackcom", "targetbody",
            "targetbodycom", "degree", "radian", "local", "global", "mesh", "plane", "xyz",
            "TRUE", "bogus", "", "2", "-1", "yes", "none", "zyx"]
UNKNOWN_TAGS = ["foo", "bodyx", "geoms", "joint2", "sensor", "include", "default", "frame", "mujoco",
                "worldbody", "option", "site", "body", "inertial", "camera", "light", "freejoint",
                "composite", "plugin", "instance", "attach", "replicate"]
BAD_BYTES = [b"\x00", b"\xff", b"\xfe\xff", b"\xc3", b"\xc3\x28", b"\xe2\x82", b"\x01", b"\x1b",
             b"\x7f", b"\xef\xbb\xbf", b"\xf0\x9f\x98\x80", b"<", b">", b"&", b"\"", b"'", b"]]>"]


def elements(root):
    return list(root.iter())


def parents(root):
    return {c: p for p in root.iter() for c in p}


def dump(root):
    return ET.tostring(root, encoding="unicode").encode("utf-8")


def pick_attr(rng, root, pred=lambda e, k, v: True):
    cands = [(e, k) for e in root.iter() for k, v in e.attrib.items() if pred(e, k, v)]
    return rng.choice(cands) if cands else None


def is_numeric(v):
    toks = v.split()
    if not toks:
        return False
    try:
        [float(t) for t in toks]
        return True
    except ValueError:
        return False


def m_truncate(rng, root, text):
    b = text.encode("utf-8")
    n = rng.randrange(1, len(b))
    return {"main": b[:n]}, f"truncated at byte {n} of {len(b)}"


def m_delete_element(rng, root, text):
    par = parents(root)
    cands = [e for e in root.iter() if e in par]
    if not cands:
        return None
    e = rng.choice(cands)
    par[e].remove(e)
    return {"main": dump(root)}, f"deleted <{e.tag}>"


def m_duplicate_element(rng, root, text):
    par = parents(root)
    cands = [e for e in root.iter() if e in par]
    if not cands:
        return None
    e = rng.choice(cands)
    p = par[e]
    i = list(p).index(e)
    p.insert(i + 1, copy.deepcopy(e))
    return {"main": dump(root)}, f"duplicated <{e.tag}>"


def m_delete_attribute(rng, root, text):
    a = pick_attr(rng, root)
    if not a:
        return None
    e, k = a
    del e.attrib[k]
    return {"main": dump(root)}, f"deleted <{e.tag}> {k}"


def m_duplicate_attribute(rng, root, text):
    a = pick_attr(rng, root)
    if not a:
        return None
    e, k = a
    marker = "__dup_marker__"
    e.set(marker, "1")
    b = dump(root).decode()
    b = b.replace(f'{marker}="1"', f'{k}="{e.attrib[k]}"', 1)
    return {"main": b.encode()}, f"<{e.tag}> {k} twice"


def m_unknown_attribute(rng, root, text):
    e = rng.choice(elements(root))
    k = rng.choice(["foo", "nmae", "sizes", "xmlns", "xmlns:x", "x:pos", "Name", "pos_", "class2"])
    e.set(k, rng.choice(["1", "", "a b"]))
    return {"main": dump(root)}, f"<{e.tag}> {k}="


def m_hostile_number(rng, root, text):
    a = pick_attr(rng, root, lambda e, k, v: is_numeric(v))
    if not a:
        return None
    e, k = a
    toks = e.attrib[k].split()
    i = rng.randrange(len(toks))
    toks[i] = rng.choice(HOSTILE)
    e.set(k, " ".join(toks))
    return {"main": dump(root)}, f"<{e.tag}> {k}=\"{e.attrib[k]}\""


def m_negate(rng, root, text):
    a = pick_attr(rng, root, lambda e, k, v: is_numeric(v))
    if not a:
        return None
    e, k = a
    toks = e.attrib[k].split()
    toks = [t[1:] if t.startswith("-") else "-" + t for t in toks]
    e.set(k, " ".join(toks))
    return {"main": dump(root)}, f"<{e.tag}> {k}=\"{e.attrib[k]}\""


def m_vector_length(rng, root, text):
    a = pick_attr(rng, root, lambda e, k, v: is_numeric(v))
    if not a:
        return None
    e, k = a
    toks = e.attrib[k].split()
    if len(toks) > 1 and rng.random() < 0.5:
        toks = toks[: rng.randrange(len(toks))]
    else:
        toks = toks + ["0.5"] * rng.randint(1, 12)
    e.set(k, " ".join(toks))
    return {"main": dump(root)}, f"<{e.tag}> {k}=\"{e.attrib[k]}\""


def m_bad_reference(rng, root, text):
    a = pick_attr(rng, root, lambda e, k, v: k in REF_ATTRS)
    if not a:
        return None
    e, k = a
    names = [x.attrib["name"] for x in root.iter() if "name" in x.attrib]
    choices = ["", " ", "nosuch", e.attrib[k] + "_", e.attrib[k].upper()] + names[:50]
    e.set(k, rng.choice(choices))
    return {"main": dump(root)}, f"<{e.tag}> {k}=\"{e.attrib[k]}\""


def m_bad_keyword(rng, root, text):
    a = pick_attr(rng, root, lambda e, k, v: k in KEYWORD_ATTRS)
    if not a:
        return None
    e, k = a
    e.set(k, rng.choice(KEYWORDS))
    return {"main": dump(root)}, f"<{e.tag}> {k}=\"{e.attrib[k]}\""


def m_add_keyword(rng, root, text):
    """A keyword attribute set on an element that may or may not have it."""
    e = rng.choice(elements(root))
    k = rng.choice(sorted(KEYWORD_ATTRS))
    e.set(k, rng.choice(KEYWORDS))
    return {"main": dump(root)}, f"<{e.tag}> {k}=\"{e.attrib[k]}\""


def m_unknown_element(rng, root, text):
    e = rng.choice(elements(root))
    tag = rng.choice(UNKNOWN_TAGS)
    child = ET.SubElement(e, tag)
    if rng.random() < 0.3:
        child.set("name", "x")
    return {"main": dump(root)}, f"<{tag}> inside <{e.tag}>"


def m_move_element(rng, root, text):
    par = parents(root)
    cands = [e for e in root.iter() if e in par]
    if len(cands) < 2:
        return None
    e = rng.choice(cands)
    inside = set(e.iter())
    dest = rng.choice([x for x in root.iter() if x not in inside])
    par[e].remove(e)
    dest.append(e)
    return {"main": dump(root)}, f"<{e.tag}> moved into <{dest.tag}>"


def m_deep_nesting(rng, root, text):
    """Elements nested deeply, built as text (too deep for a recursive serializer)."""
    depth = rng.choice([20, 100, 300, 1000, 3000])
    kind = rng.choice(["body", "body_geom", "frame", "unknown", "default"])
    if kind == "default":
        opening = "".join(f'<default class="d{i}">' for i in range(depth))
        inner = opening + "</default>" * depth
        where = "</mujoco>"
    else:
        unit = {"body": "<body>", "frame": "<frame>", "unknown": "<zz>",
                "body_geom": '<body><joint axis="0 1 0"/><geom size="0.01" pos="0 0 0.01"/>'}[kind]
        close = {"body": "</body>", "body_geom": "</body>", "frame": "</frame>", "unknown": "</zz>"}[kind]
        inner = unit * depth + close * depth
        where = "</worldbody>"
        if where not in text:
            return None
    if kind == "default":
        inner = "<default>" + inner + "</default>"
    return {"main": text.replace(where, inner + where, 1).encode()}, f"{kind} nested {depth} deep"


def m_wide(rng, root, text):
    par = parents(root)
    cands = [e for e in root.iter() if e in par and e.tag in ("geom", "site", "body", "joint", "motor", "light", "camera", "texture", "material")]
    if not cands:
        return None
    e = rng.choice(cands)
    n = rng.choice([50, 200, 1000])
    p = par[e]
    keep_names = rng.random() < 0.3
    for i in range(n):
        c = copy.deepcopy(e)
        if not keep_names:
            for x in c.iter():
                if "name" in x.attrib:
                    x.set("name", f"{x.attrib['name']}_w{i}")
        p.append(c)
    return {"main": dump(root)}, f"<{e.tag}> repeated {n} times{' with its names' if keep_names else ''}"


def m_include(rng, root, text):
    """Part of the model moved into included files, in several graphs."""
    sections = [e for e in root if e.tag not in ("compiler",)]
    if not sections:
        return None
    sec = rng.choice(sections)
    kind = rng.choice(["ok", "twice", "self", "cycle", "missing", "empty", "wrong_root", "nested",
                       "nested_subdir", "no_file_attr", "child_elements", "in_body"])
    files = {}
    idx = list(root).index(sec)
    root.remove(sec)
    part = b"<mujoco>" + ET.tostring(sec, encoding="unicode").encode() + b"</mujoco>"
    inc = ET.Element("include", {"file": "@inc1.xml"})
    if kind == "ok":
        files["@inc1.xml"] = part
    elif kind == "twice":
        files["@inc1.xml"] = part
        root.insert(idx, ET.Element("include", {"file": "@inc1.xml"}))
    elif kind == "self":
        files["@inc1.xml"] = part.replace(b"</mujoco>", b"<include file=\"@inc1.xml\"/></mujoco>")
    elif kind == "cycle":
        files["@inc1.xml"] = b"<mujoco><include file=\"@inc2.xml\"/></mujoco>"
        files["@inc2.xml"] = part.replace(b"</mujoco>", b"<include file=\"@inc1.xml\"/></mujoco>")
    elif kind == "missing":
        inc.set("file", "@nosuch.xml")
    elif kind == "empty":
        files["@inc1.xml"] = b""
    elif kind == "wrong_root":
        files["@inc1.xml"] = part.replace(b"<mujoco>", b"<mujocoo>").replace(b"</mujoco>", b"</mujocoo>")
    elif kind == "nested":
        files["@inc1.xml"] = b"<mujoco><include file=\"@inc2.xml\"/></mujoco>"
        files["@inc2.xml"] = part
    elif kind == "nested_subdir":
        # the nested include names a file next to the including one (MuJoCo 4.0 falls back to
        # the including file's directory)
        inc.set("file", "@sub/inc1.xml")
        files["@sub/inc1.xml"] = b"<mujoco><include file=\"@inc2.xml\"/></mujoco>"
        files["@sub/@inc2.xml"] = part
    elif kind == "no_file_attr":
        del inc.attrib["file"]
    elif kind == "child_elements":
        files["@inc1.xml"] = part
        ET.SubElement(inc, "geom")
    elif kind == "in_body":
        root.insert(idx, sec)
        body = next((b for b in root.iter("body")), None)
        if body is None:
            return None
        files["@inc1.xml"] = b"<mujoco><geom size=\"0.1\"/></mujoco>"
        body.append(inc)
        return {"main": dump(root), **files}, f"include ({kind})"
    root.insert(idx, inc)
    return {"main": dump(root), **files}, f"include of <{sec.tag}> ({kind})"


def m_bad_bytes(rng, root, text):
    b = text.encode("utf-8")
    bad = rng.choice(BAD_BYTES)
    where = rng.choice(["anywhere", "attribute", "start", "comment", "name"])
    if where == "start":
        n = 0
    elif where in ("attribute", "name"):
        quotes = [m.start() + 1 for m in re.finditer(rb'"', b)]
        if not quotes:
            return None
        n = rng.choice(quotes)
    elif where == "comment":
        n = b.find(b">") + 1
        bad = b"<!--" + bad + b"-->"
    else:
        n = rng.randrange(len(b))
    return {"main": b[:n] + bad + b[n:]}, f"bytes {bad!r} at {n} ({where})"


def m_xml_features(rng, root, text):
    kind = rng.choice(["xmlns", "xmlns_prefix", "entity_decl", "predefined_entity", "char_ref",
                       "cdata", "pi", "doctype", "comment_in_attr", "bom", "xml_decl", "two_roots",
                       "text_content", "undefined_entity"])
    b = text
    if kind == "xmlns":
        b = b.replace("<mujoco", '<mujoco xmlns="http://example.org/mjcf"', 1)
    elif kind == "xmlns_prefix":
        b = b.replace("<mujoco", '<mujoco xmlns:x="http://example.org/x"', 1)
    elif kind == "entity_decl":
        b = '<?xml version="1.0"?>\n<!DOCTYPE mujoco [<!ENTITY h "0.5">]>\n' + b.replace('"0.5"', '"&h;"')
    elif kind == "predefined_entity":
        b = re.sub(r'name="([^"]*)"', lambda m: f'name="{m.group(1)}&amp;x"', b, count=1)
    elif kind == "char_ref":
        b = re.sub(r'pos="([^"]*)"', lambda m: 'pos="' + m.group(1).replace(" ", "&#32;") + '"', b, count=1)
    elif kind == "cdata":
        b = b.replace("<worldbody>", "<worldbody><![CDATA[ text ]]>", 1)
    elif kind == "pi":
        b = b.replace("<worldbody>", "<worldbody><?php echo 1 ?>", 1)
    elif kind == "doctype":
        b = '<!DOCTYPE mujoco SYSTEM "mujoco.dtd">\n' + b
    elif kind == "comment_in_attr":
        b = b.replace('name="', 'name="<!-- c -->', 1)
    elif kind == "bom":
        return {"main": b"\xef\xbb\xbf" + b.encode()}, "byte-order mark"
    elif kind == "xml_decl":
        b = '<?xml version="1.0" encoding="ISO-8859-1"?>\n' + b
    elif kind == "two_roots":
        b = b + "\n<mujoco/>"
    elif kind == "text_content":
        b = b.replace("<worldbody>", "<worldbody>some text", 1)
    elif kind == "undefined_entity":
        b = b.replace('name="', 'name="&nosuch;', 1)
    if b == text:
        return None
    return {"main": b.encode()}, kind


MUTATIONS = [
    (m_truncate, 2), (m_delete_element, 4), (m_duplicate_element, 5), (m_delete_attribute, 4),
    (m_duplicate_attribute, 2), (m_unknown_attribute, 2), (m_hostile_number, 10), (m_negate, 4),
    (m_vector_length, 5), (m_bad_reference, 6), (m_bad_keyword, 5), (m_add_keyword, 3),
    (m_unknown_element, 4), (m_move_element, 3), (m_deep_nesting, 2), (m_wide, 2),
    (m_include, 4), (m_bad_bytes, 4), (m_xml_features, 3),
]


def generate(seed, count, max_bytes=None):
    """`count` mutants, deterministic in `seed`: a list of dicts with keys name, model,
    mutation, detail, files (relative name -> bytes; "main" is the model)."""
    rng = random.Random(seed)
    bases = base_models()
    funcs = [f for f, w in MUTATIONS for _ in range(w)]
    out = []
    tries = 0
    while len(out) < count and tries < count * 20:
        tries += 1
        model, text = rng.choice(bases)
        f = rng.choice(funcs)
        r = f(rng, ET.fromstring(text), text)
        if r is None:
            continue
        files, detail = r
        if max_bytes is not None and sum(len(v) for v in files.values()) > max_bytes:
            continue
        out.append({"model": model, "mutation": f.__name__[2:], "detail": detail, "files": files})
    return out


def write_case(dirpath, name, case):
    """Write a case's files into `dirpath` as `name.xml` and `name.<aux>`; returns the main path."""
    main = os.path.join(dirpath, name + ".xml")
    for k, v in case["files"].items():
        if k == "main":
            path = main
            data = v.replace(b"@", (name + ".").encode())
        else:
            path = os.path.join(dirpath, k.replace("@", name + "."))
            data = v.replace(b"@", (name + ".").encode())
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    return main


# ---------------------------------------------------------------------------------------------
# The oracle: MuJoCo in a worker subprocess
# ---------------------------------------------------------------------------------------------

WORKER = r"""
import json, sys, mujoco
for line in sys.stdin:
    path = line.rstrip("\n")
    try:
        m = mujoco.MjModel.from_xml_path(path)
        out = {"ok": True, "nq": m.nq, "nv": m.nv}
    except Exception as e:
        out = {"ok": False, "err": str(e).strip().replace("\n", " | ")[:400]}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
"""


class Oracle:
    """MuJoCo reading files one at a time in a subprocess, restarted after a crash or a hang."""

    def __init__(self, timeout, cwd):
        self.timeout = timeout
        self.cwd = cwd
        self.proc = None

    def _start(self):
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=self.cwd, text=True, bufsize=1)

    def _kill(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def read(self, path):
        """{"ok": bool, "err": str} or {"crash": True} / {"hang": True}."""
        if self.proc is None:
            self._start()
        self.proc.stdin.write(path + "\n")
        self.proc.stdin.flush()
        r, _, _ = select.select([self.proc.stdout], [], [], self.timeout)
        if not r:
            self._kill()
            return {"hang": True}
        line = self.proc.stdout.readline()
        if not line:
            self._kill()
            return {"crash": True}
        return json.loads(line)

    def close(self):
        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait()
            self.proc = None


# ---------------------------------------------------------------------------------------------
# diffmj through its command line (full mode)
# ---------------------------------------------------------------------------------------------

# an element, or "(top level)" for a syntax error before the root element is read
POSITION_RE = re.compile(r":\d+:\d+: (<[^>]+>|\(top level\))")


def run_cli(cmd, timeout):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return "hang", ""
    if "panicked" in p.stderr:
        return "panic", p.stderr
    if p.returncode < 0:
        return "abort", p.stderr
    return ("ok" if p.returncode == 0 else "error"), p.stderr


def diffmj_read(binary, path, timeout):
    """diffmj's decision on a file: ("accept"|"refuse"|"panic"|"abort"|"hang", message, rollout outcome)."""
    status, err = run_cli([binary, "info", path], timeout)
    if status == "ok":
        rstat, rerr = run_cli([binary, "rollout", path, "--steps", "5", "--out", os.devnull], timeout)
        return "accept", "", rstat, rerr
    if status == "error":
        return "refuse", err.strip().replace("diffmj: error: ", "", 1), None, ""
    return status, err, None, ""


# ---------------------------------------------------------------------------------------------
# Modes
# ---------------------------------------------------------------------------------------------


def sample_mode(args):
    cases = generate(SAMPLE_SEED, SAMPLE_COUNT, SAMPLE_MAX_BYTES)
    if os.path.isdir(GOLDEN):
        keep = {"expected_mismatches.txt", "README.md"}
        for f in os.listdir(GOLDEN):
            if f not in keep:
                p = os.path.join(GOLDEN, f)
                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    os.makedirs(GOLDEN, exist_ok=True)
    manifest = []
    with tempfile.TemporaryDirectory() as tmp:
        oracle = Oracle(args.timeout, tmp)
        for i, case in enumerate(cases):
            name = f"{i:04d}"
            main = write_case(GOLDEN, name, case)
            r = oracle.read(main)
            if r.get("crash") or r.get("hang"):
                # MuJoCo itself fails: no decision to compare with; left out
                for f in os.listdir(GOLDEN):
                    if f.startswith(name + "."):
                        p = os.path.join(GOLDEN, f)
                        shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
                print(f"{name}: MuJoCo {'crashed' if r.get('crash') else 'hung'}, left out", file=sys.stderr)
                continue
            manifest.append({"file": name + ".xml", "model": case["model"], "mutation": case["mutation"],
                             "detail": case["detail"][:200], "mujoco": "accept" if r["ok"] else "refuse",
                             "mujoco_error": r.get("err", "")})
        oracle.close()
    with open(os.path.join(GOLDEN, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=0)
        f.write("\n")
    acc = sum(c["mujoco"] == "accept" for c in manifest)
    size = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(GOLDEN) for f in fs)
    print(f"{len(manifest)} files ({acc} accepted by MuJoCo, {len(manifest) - acc} refused), {size / 1e6:.2f} MB in {GOLDEN}")


def full_mode(args):
    binary = os.path.abspath(args.diffmj)
    if not os.path.exists(binary):
        sys.exit(f"no diffmj binary at {binary} (cargo build --release -j1 --bin diffmj)")
    cases = generate(args.seed, args.count)
    out = args.out or tempfile.mkdtemp(prefix="malformed-")
    os.makedirs(out, exist_ok=True)
    oracle = Oracle(args.timeout, out)
    figures = Counter()
    by_mutation = defaultdict(Counter)
    mismatches = []
    unpositioned = []
    t0 = time.time()
    for i, case in enumerate(cases):
        name = f"{i:05d}"
        main = write_case(out, name, case)
        r = oracle.read(main)
        figures["files"] += 1
        if r.get("crash") or r.get("hang"):
            figures["mujoco_" + ("crash" if r.get("crash") else "hang")] += 1
            continue
        mj = "accept" if r["ok"] else "refuse"
        ours, msg, rstat, rerr = diffmj_read(binary, main, args.timeout)
        figures["compared"] += 1
        by_mutation[case["mutation"]]["files"] += 1
        if ours in ("panic", "abort", "hang"):
            figures[ours + "s"] += 1
            mismatches.append((name, case, mj, ours, (msg or "")[-300:], r.get("err", "")))
            continue
        if rstat in ("panic", "abort", "hang"):
            figures["step_" + rstat + "s"] += 1
            mismatches.append((name, case, mj, "step " + rstat, rerr[-300:], ""))
        if ours == mj:
            figures["agree"] += 1
            by_mutation[case["mutation"]]["agree"] += 1
        else:
            figures["disagree"] += 1
            figures[f"mujoco_{mj}_diffmj_{ours}"] += 1
            mismatches.append((name, case, mj, ours, msg, r.get("err", "")))
        if ours == "refuse" and not POSITION_RE.search(msg):
            figures["refusals_without_position"] += 1
            unpositioned.append((name, msg))
        if args.progress and (i + 1) % 200 == 0:
            print(f"  {i + 1}/{len(cases)} ...", file=sys.stderr)
    oracle.close()
    dt = time.time() - t0
    n = figures["compared"]
    print(f"files generated: {figures['files']} (seed {args.seed}), in {out}")
    print(f"MuJoCo crashes / hangs (left out): {figures['mujoco_crash']} / {figures['mujoco_hang']}")
    print(f"compared: {n}; accept/refuse agreement: {figures['agree']} ({100.0 * figures['agree'] / max(n, 1):.2f}%)")
    print(f"  MuJoCo accepts, diffmj refuses: {figures['mujoco_accept_diffmj_refuse']}")
    print(f"  MuJoCo refuses, diffmj accepts: {figures['mujoco_refuse_diffmj_accept']}")
    print(f"diffmj panics: {figures['panics']}, aborts: {figures['aborts']}, hangs: {figures['hangs']} (timeout {args.timeout} s)")
    print(f"diffmj steps of accepted files: panics {figures['step_panics']}, aborts {figures['step_aborts']}, hangs {figures['step_hangs']}")
    print(f"diffmj refusals without file:line:column: <element>: {figures['refusals_without_position']}")
    print(f"wall time: {dt:.0f} s")
    print("agreement by mutation:")
    for k in sorted(by_mutation):
        c = by_mutation[k]
        print(f"  {k:20s} {c['agree']:5d}/{c['files']:5d}")
    if mismatches:
        print("mismatches (file, mutation, MuJoCo, diffmj):")
        for name, case, mj, ours, msg, mjerr in mismatches[: args.show]:
            print(f"  {name} {case['model']} {case['mutation']}: {case['detail'][:120]}")
            print(f"      MuJoCo {mj}{': ' + mjerr[:160] if mjerr else ''}")
            print(f"      diffmj {ours}{': ' + msg[:160] if msg else ''}")
    if unpositioned:
        print("refusals without position:")
        for name, msg in unpositioned[: args.show]:
            print(f"  {name}: {msg[:200]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", nargs="?", default="sample", choices=["sample", "full"])
    ap.add_argument("--count", type=int, default=3000, help="full mode: number of files")
    ap.add_argument("--seed", type=int, default=FULL_SEED, help="full mode: the seed")
    ap.add_argument("--diffmj", default=os.path.join(ROOT, "target", "release", "diffmj"))
    ap.add_argument("--out", help="full mode: directory for the files (default: a fresh temporary one)")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per file and reader")
    ap.add_argument("--show", type=int, default=200, help="full mode: mismatches listed")
    ap.add_argument("--progress", action="store_true")
    args = ap.parse_args()
    sample_mode(args) if args.mode == "sample" else full_mode(args)


if __name__ == "__main__":
    main()
