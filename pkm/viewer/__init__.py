"""A 3-D viewer of a robot in the browser: the scene data of a motion (:mod:`.scene`) and a
self-contained HTML page that shows and plays it (:mod:`.page`, three.js from the optional
extra ``view``: ``pip install pkm[view]``)."""
from pkm.viewer.page import html_page, three_js
from pkm.viewer.scene import Scene, scene

__all__ = ["Scene", "scene", "html_page", "three_js"]
