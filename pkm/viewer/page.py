"""A self-contained HTML page of a :class:`~pkm.viewer.scene.Scene`: three.js inlined (from the
``meshcat`` package's viewer bundle, MIT licence; the optional extra ``view``), the scene as inline
JSON, a time slider and a play button; no server, no network.

After it has built its scene the page sets machine-readable markers for a headless browser:
``document.body.dataset.bodies`` (the number of body objects in the scene), ``dataset.renderer``
(``webgl``, or ``canvas2d`` where WebGL is not available: then the bodies are drawn as a 2-D
projection), and ``<pre id="poses">`` (also ``window.pkmPoses``): JSON ``{"frame", "t", "bodies":
[{"name", "position"}]}`` with each body frame's world origin at the shown frame, read back from
the scene objects. The URL fragment ``#frame=K`` chooses the frame shown first.
"""
from __future__ import annotations

import json

from pkm.errors import PkmError

__all__ = ["html_page", "three_js"]


def three_js() -> str:
    """The three.js bundle shipped by ``meshcat`` (exports ``MeshCat.THREE``; MIT, three.js MIT; its
    licence notices, comments, go first), read from the installed
    package's files without importing it (its ``__init__`` loads zmq and tornado)."""
    from importlib.util import find_spec
    from pathlib import Path

    try:
        spec = find_spec("meshcat")
        for folder in (spec.submodule_search_locations or ()) if spec is not None else ():
            bundle = Path(folder) / "viewer" / "dist" / "main.min.js"
            if bundle.is_file():   # with its licence notices (comments), which the page carries along
                notices = bundle.with_name("main.min.js.LICENSE.txt")
                head = notices.read_text(encoding="utf-8") + "\n" if notices.is_file() else ""
                return head + bundle.read_text(encoding="utf-8")
    except (ImportError, ValueError, OSError, UnicodeDecodeError):
        pass
    raise PkmError("the 3-D viewer needs three.js from the optional extra 'view': "
                       "pip install 'pkm[view]' (it installs meshcat)")


def _inline(text: str) -> str:
    """``text`` safe inside a ``<script>`` element: no ``</script`` can end it early, no ``<!--``
    change how it is parsed (both only occur inside JS strings, where ``\\/`` is ``/``, ``\\!`` is
    ``!``; the inline JSON writes every ``<`` as ``\\u003c``)."""
    import re

    return re.sub(r"(?i)</(script)", r"<\\/\1", text).replace("<!--", "<\\!--")


def html_page(sc, *, frames: bool = False, axes: bool = False) -> str:
    """The page of scene ``sc``; ``frames``: draw each body frame's axes (x red, y green, z blue);
    ``axes``: draw the joint axes (``sc.axes`` must hold them)."""
    data = sc.to_json()
    data["showFrames"], data["showAxes"] = bool(frames), bool(axes and sc.axes is not None)
    title = sc.robot.replace("&", "&amp;").replace("<", "&lt;")
    return (_HEAD.replace("@TITLE@", title) + "<script>" + _inline(three_js()) + "</script>\n"
            + '<script type="application/json" id="scene">' + json.dumps(data).replace("<", "\\u003c") + "</script>\n"
            + "<script>" + _VIEWER + "</script>\n</body>\n</html>\n")


_HEAD = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>pkm view: @TITLE@</title>
<style>html,body{margin:0;height:100%;background:#f4f4f4;font:13px sans-serif;overflow:hidden}
#view{position:absolute;top:0;left:0;right:0;bottom:44px}#bar{position:absolute;left:0;right:0;bottom:0;
height:44px;display:flex;align-items:center;gap:8px;padding:0 10px;background:#fff;border-top:1px solid #ccc}
#slider{flex:1}#poses{display:none}</style></head>
<body><div id="view"></div><div id="bar"><button id="play">play</button>
<input id="slider" type="range" min="0" max="0" value="0" step="1"><span id="time"></span></div>
<pre id="poses"></pre>
"""

_VIEWER = r"""
(function () {
  const S = JSON.parse(document.getElementById('scene').textContent);
  const F = S.t.length, B = S.bodies.length, view = document.getElementById('view');
  const slider = document.getElementById('slider'), label = document.getElementById('time');
  slider.max = F - 1;
  let frame = 0;
  const m = /frame=(\d+)/.exec(location.hash);
  if (m) frame = Math.min(F - 1, parseInt(m[1], 10));
  // the scene's centre and camera (z up)
  let lo = [Infinity, Infinity, Infinity], hi = [-Infinity, -Infinity, -Infinity];
  for (const fr of S.poses) for (const P of fr) for (let k = 0; k < 3; k++) {
    lo[k] = Math.min(lo[k], P[4 * k + 3]); hi[k] = Math.max(hi[k], P[4 * k + 3]); }
  const centre = [0, 1, 2].map(k => (lo[k] + hi[k]) / 2);
  let yaw = 0.8, pitch = 0.45, dist = 2.6 * S.size;
  const palette = [0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b, 0xe377c2, 0x17becf];
  const limbs = [...new Set(S.bodies.map(b => b.limb))];
  const colour = b => b.limb === '' ? 0x777777 : palette[limbs.indexOf(b.limb) % palette.length];
  let renderer = null, THREE = (window.MeshCat || {}).THREE, groups = [], cam, scene3, axisLines = [];
  try {
    const c = document.createElement('canvas');
    if (!THREE || !(c.getContext('webgl2') || c.getContext('webgl'))) throw new Error('no WebGL');
    renderer = new THREE.WebGLRenderer({antialias: true, preserveDrawingBuffer: true});
  } catch (e) { renderer = null; }
  function eye() {
    return [centre[0] + dist * Math.cos(pitch) * Math.cos(yaw), centre[1] + dist * Math.cos(pitch) * Math.sin(yaw),
            centre[2] + dist * Math.sin(pitch)];
  }
  function poseMatrix(P) {
    const M = new THREE.Matrix4();
    M.set(P[0], P[1], P[2], P[3], P[4], P[5], P[6], P[7], P[8], P[9], P[10], P[11], 0, 0, 0, 1);
    return M;
  }
  function build3() {
    scene3 = new THREE.Scene();
    scene3.background = new THREE.Color(0xf4f4f4);
    scene3.add(new THREE.AmbientLight(0xffffff, 0.55));
    const sun = new THREE.DirectionalLight(0xffffff, 0.7); sun.position.set(1, 2, 3); scene3.add(sun);
    cam = new THREE.PerspectiveCamera(40, 1, S.size / 100, S.size * 100); cam.up.set(0, 0, 1);
    S.bodies.forEach(b => {
      const g = new THREE.Group(); g.matrixAutoUpdate = false; g.userData.pkmBody = b.name;
      const s = b.shape, mat = new THREE.MeshLambertMaterial({color: colour(b), transparent: !!s.nominal,
                                                               opacity: s.nominal ? 0.5 : 1});
      let geo;
      if (s.type === 'cylinder') geo = new THREE.CylinderGeometry(s.radius, s.radius, s.length, 24);
      else if (s.type === 'box') geo = new THREE.BoxGeometry(s.size[0], s.size[1], s.size[2]);
      else geo = new THREE.SphereGeometry(s.radius, 24, 16);
      const mesh = new THREE.Mesh(geo, mat);
      mesh.position.set(s.center[0], s.center[1], s.center[2]);
      if (s.type === 'cylinder') mesh.quaternion.setFromUnitVectors(new THREE.Vector3(0, 1, 0),
                                                                     new THREE.Vector3(...s.axis).normalize());
      g.add(mesh);
      if (S.showFrames) g.add(new THREE.AxesHelper(0.08 * S.size));
      scene3.add(g); groups.push(g);
    });
    if (S.showAxes) for (let j = 0; j < S.axes[0].length; j++) {
      const geo = new THREE.BufferGeometry().setFromPoints([new THREE.Vector3(), new THREE.Vector3()]);
      const line = new THREE.Line(geo, new THREE.LineBasicMaterial({color: 0x000000}));
      scene3.add(line); axisLines.push(line);
    }
    view.appendChild(renderer.domElement);
  }
  let canvas2 = null;
  function build2() {
    canvas2 = document.createElement('canvas'); view.appendChild(canvas2);
    S.bodies.forEach(b => groups.push({name: b.name, pose: null}));
  }
  function project(p, w, h) {   // the 2-D fallback: the same camera, a perspective projection by hand
    const e = eye(), f = [centre[0] - e[0], centre[1] - e[1], centre[2] - e[2]];
    const n = Math.hypot(...f); for (let k = 0; k < 3; k++) f[k] /= n;
    let r = [f[1], -f[0], 0]; const nr = Math.hypot(...r); r = r.map(v => v / nr);
    const u = [r[1] * f[2] - r[2] * f[1], r[2] * f[0] - r[0] * f[2], r[0] * f[1] - r[1] * f[0]];
    const d = [p[0] - e[0], p[1] - e[1], p[2] - e[2]];
    const z = d[0] * f[0] + d[1] * f[1] + d[2] * f[2], s = 0.5 * h / Math.tan(20 * Math.PI / 180) / z;
    return [w / 2 + s * (d[0] * r[0] + d[1] * r[1] + d[2] * r[2]), h / 2 - s * (d[0] * u[0] + d[1] * u[1] + d[2] * u[2]), s];
  }
  const world = (P, c) => [0, 1, 2].map(k => P[4 * k] * c[0] + P[4 * k + 1] * c[1] + P[4 * k + 2] * c[2] + P[4 * k + 3]);
  function draw2() {
    const w = view.clientWidth, h = view.clientHeight; canvas2.width = w; canvas2.height = h;
    const g = canvas2.getContext('2d'); g.fillStyle = '#f4f4f4'; g.fillRect(0, 0, w, h); g.lineCap = 'round';
    S.bodies.forEach((b, i) => {
      const P = S.poses[frame][i], s = b.shape, col = '#' + colour(b).toString(16).padStart(6, '0');
      g.strokeStyle = col; g.fillStyle = col;
      if (s.type === 'cylinder') {
        const a = s.axis, L = s.length / 2;
        const p0 = project(world(P, s.center.map((c, k) => c - L * a[k])), w, h);
        const p1 = project(world(P, s.center.map((c, k) => c + L * a[k])), w, h);
        g.lineWidth = Math.max(1, 2 * s.radius * p0[2]); g.beginPath(); g.moveTo(p0[0], p0[1]); g.lineTo(p1[0], p1[1]); g.stroke();
      } else {
        const c = project(world(P, s.center), w, h), r = s.type === 'box' ? Math.max(...s.size) / 2 : s.radius;
        g.beginPath(); g.arc(c[0], c[1], Math.max(2, r * c[2]), 0, 2 * Math.PI); g.fill();
      }
      groups[i].pose = P;
    });
  }
  function show(k) {
    frame = k; slider.value = k; label.textContent = 't = ' + S.t[k].toPrecision(6) + ' s';
    const positions = [];
    if (renderer) {
      const w = view.clientWidth, h = view.clientHeight;
      renderer.setSize(w, h); cam.aspect = w / h; cam.updateProjectionMatrix();
      cam.position.set(...eye()); cam.lookAt(...centre);
      groups.forEach((g, i) => { g.matrix.copy(poseMatrix(S.poses[k][i])); });
      axisLines.forEach((line, j) => {
        const [p, e] = S.axes[k][j], L = 0.06 * S.size, pos = line.geometry.attributes.position;
        pos.setXYZ(0, p[0] - L * e[0], p[1] - L * e[1], p[2] - L * e[2]);
        pos.setXYZ(1, p[0] + L * e[0], p[1] + L * e[1], p[2] + L * e[2]); pos.needsUpdate = true;
      });
      scene3.updateMatrixWorld(true);
      groups.forEach(g => { const E = g.matrixWorld.elements; positions.push({name: g.userData.pkmBody, position: [E[12], E[13], E[14]]}); });
      renderer.render(scene3, cam);
    } else {
      draw2();
      groups.forEach(g => positions.push({name: g.name, position: [g.pose[3], g.pose[7], g.pose[11]]}));
    }
    window.pkmPoses = {frame: k, t: S.t[k], bodies: positions};
    document.getElementById('poses').textContent = JSON.stringify(window.pkmPoses);
  }
  if (renderer) build3(); else build2();
  let count = 0;
  if (renderer) scene3.traverse(o => { if (o.userData.pkmBody !== undefined) count++; }); else count = groups.length;
  let timer = null;
  document.getElementById('play').onclick = function () {
    if (timer) { clearInterval(timer); timer = null; this.textContent = 'play'; return; }
    this.textContent = 'pause';
    const dt = F > 1 ? Math.max(16, 1000 * (S.t[F - 1] - S.t[0]) / (F - 1)) : 100;
    timer = setInterval(() => show((frame + 1) % F), dt);
  };
  slider.oninput = () => show(parseInt(slider.value, 10));
  let drag = null;
  view.onmousedown = e => { drag = [e.clientX, e.clientY]; };
  window.onmouseup = () => { drag = null; };
  window.onmousemove = e => { if (!drag) return; yaw -= 0.01 * (e.clientX - drag[0]);
    pitch = Math.max(-1.5, Math.min(1.5, pitch + 0.01 * (e.clientY - drag[1]))); drag = [e.clientX, e.clientY]; show(frame); };
  view.onwheel = e => { e.preventDefault(); dist *= Math.exp(0.001 * e.deltaY); show(frame); };
  window.onresize = () => show(frame);
  show(frame);
  document.body.dataset.renderer = renderer ? 'webgl' : 'canvas2d';
  document.body.dataset.bodies = count;
})();
"""
