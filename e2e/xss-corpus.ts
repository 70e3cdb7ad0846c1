// Hostile strings for e2e/xss.spec.ts. Each one, if the console ever ran it as code, sets
// window.__xss to its number (or opens a dialog), which the spec watches for. To cover a new field
// (a handler's log lines, say), add it to the spec's arrangement; to try a new trick, add a line here.

/** The payloads: markup, script-closing, SVG/MathML, event handlers, javascript: and data: URLs, template syntax, encodings. */
export const XSS_PAYLOADS: readonly string[] = [
  `<script>window.__xss=1</script>`,
  `</script><script>window.__xss=2</script>`,
  `<img src=x onerror="window.__xss=3">`,
  `<svg onload="window.__xss=4">`,
  `<svg><script>window.__xss=5</script></svg>`,
  `<iframe src="javascript:parent.__xss=6"></iframe>`,
  `javascript:window.__xss=7`,
  `<a href="javascript:window.__xss=8" id="xss8">click</a>`,
  `{{constructor.constructor('window.__xss=9')()}}`,
  "${window.__xss=10}",
  `<details open ontoggle="window.__xss=11">`,
  `<body onload="window.__xss=12">`,
  `"><img src=x onerror=window.__xss=13>`,
  `'><svg/onload=window.__xss=14>`,
  `<math><mtext><table><mglyph><style><img src=x onerror=window.__xss=15>`,
  `<style>@import 'javascript:window.__xss=16'</style>`,
  `<object data="javascript:window.__xss=17"></object>`,
  `<embed src="javascript:window.__xss=18">`,
  `<input autofocus onfocus="window.__xss=19">`,
  `<video><source onerror="window.__xss=20"></video>`,
  `<div style="background:url(javascript:window.__xss=22)">x</div>`,
  `<base href="javascript:window.__xss=23//">`,
  `<meta http-equiv="refresh" content="0;url=javascript:window.__xss=24">`,
  `<form action="javascript:window.__xss=25"><button>go</button></form>`,
  `<!--<img src="--><img src=x onerror=window.__xss=26//">`,
  `<noscript><p title="</noscript><img src=x onerror=window.__xss=27>">`,
  `<template><img src=x onerror=window.__xss=28></template>`,
  `<%= window.__xss=29 %>`,
  `{{7*7}} [[window.__xss=30]] #{window.__xss=30}`,
  `\\u003cscript\\u003ewindow.__xss=31\\u003c/script\\u003e`,
  `&lt;script&gt;window.__xss=32&lt;/script&gt;`,
  `<scr<script>ipt>window.__xss=33</scr</script>ipt>`,
  `data:text/html,<script>window.__xss=34</script>`,
  `<img src=x onerror=alert(35)>`,
  `<svg><animate onbegin="window.__xss=36" attributeName=x dur=1s>`,
  `<x contenteditable onfocus="window.__xss=37" autofocus>x</x>`,
];

/** Schedule names allow letters, digits, spaces and . _ : -; these hostile-looking ones fit and must render as text too. */
export const XSS_NAMES: readonly string[] = ["javascript:alert-1", "data:text-html base64", "on error img src x"];
