// How the lab looks beside a lesson: the lesson's colours (5.), the toolbar refitted, the page's own
// style (11., 14., 16., 17., 18.), and × ÷ ± drawn at a Latin width in Markdown (22.).

// 5. the lab in the lesson's colours: JupyterLab's dark theme while the lesson page (Material,
// body[data-md-color-scheme]) is dark, its light theme otherwise, following the page's toggle.
// One theme change at a time, and only once the lab shows a theme: JupyterLab covers the page
// while it loads a theme and takes the cover away a frame after the theme is on, and a second
// load started before that puts up the same cover twice and takes it away twice, the second time
// throwing "Failed to execute 'removeChild' on 'Node'" (Notebook 7's splash). A change asked for
// before the first theme was on was such a second load, of the same theme (seen in CI runs).
function followLessonScheme(theApp) {
  let lesson = null;
  try { lesson = window.parent !== window ? window.parent.document.body : null; } catch (e) { /* another origin */ }
  if (!lesson || !theApp.commands.hasCommand('apputils:change-theme')) return;
  const shown = () => document.body.dataset.jpThemeName;   // set by JupyterLab once a theme is on
  let loading = false;
  const apply = () => {
    const theme = lesson.getAttribute('data-md-color-scheme') === 'slate' ? 'JupyterLab Dark' : 'JupyterLab Light';
    if (loading || !shown() || shown() === theme) return;
    loading = true;
    theApp.commands.execute('apputils:change-theme', { theme }).catch(() => { loading = false; });
  };
  // a theme is on: its cover goes in the next frame, before this callback (queued after it)
  new MutationObserver(() => requestAnimationFrame(() => { loading = false; apply(); }))
    .observe(document.body, { attributes: true, attributeFilter: ['data-jp-theme-name'] });
  new MutationObserver(apply).observe(lesson, { attributes: true, attributeFilter: ['data-md-color-scheme'] });
  requestAnimationFrame(apply);   // after the frame that takes away the first theme's cover
}

// The notebook's toolbar folds what does not fit into "⋯", measuring its items when its own
// size changes. WebKit had it measure them before they were drawn (0 px wide), and its size never
// changed after: on a phone the kernel's name and status wrapped to a second line, on top of the
// notebook. So it measures again whenever one of its items (the kernel's name is one added
// later) changes width.
function refitToolbar(toolbar) {
  let Widget = toolbar && toolbar.constructor;
  while (Widget && !Widget.ResizeMessage) Widget = Object.getPrototypeOf(Widget);
  if (!Widget || typeof ResizeObserver === 'undefined') return;
  const widths = new WeakMap();
  const observer = new ResizeObserver((entries) => {
    const changed = entries.filter((e) => widths.get(e.target) !== e.contentRect.width);
    entries.forEach((e) => widths.set(e.target, e.contentRect.width));
    const { clientWidth, clientHeight } = toolbar.node;
    if (changed.length && clientWidth > 0 && !toolbar.isDisposed) {
      toolbar.processMessage(new Widget.ResizeMessage(clientWidth, clientHeight));
    }
  });
  const observeItems = () => { for (const item of toolbar.node.children) observer.observe(item); };
  new MutationObserver(observeItems).observe(toolbar.node, { childList: true });   // items added later
  observeItems();
}

// In a narrow side panel, two of the notebook app's badges are noise: "Not Trusted" (only about
// JavaScript inside outputs, which these notebooks do not have) and the fading kernel-status
// badge, which covers the menu bar on a phone (the lesson page shows Python's progress).
// 11. JupyterLab wraps printed output anywhere (word-break: break-all): a long line of Chinese
// with numbers broke "p < 1e-300" into "1e-3" and "00" in the narrow panel. Here it wraps between
// words and characters, as the lesson does; inside a word only when nothing else fits.
// 14. Beside a lesson nothing here loops while Python starts: JupyterLab's splash spinner (under
// the lesson's preview of the notebook) and the kernel indicator's spinner in the toolbar, which
// turns as long as the kernel is starting or busy, stand still (the indicator: a ring with a gap,
// the ✓ once idle). The lesson page's panel says how the start is going, with the seconds, and a
// running cell shows [*]. (In WebKit without a GPU every frame of a turning spinner was composited
// on the CPU Python's start needs: benchmarks/webkit_probe.py --ab.)
// 16. The notebook shows a scrollbar of its own, always there, so a learner sees in the narrow
// panel that there is more; a code cell's long line wraps instead of scrolling sideways
// (site/lab/overrides.json: codeCellConfig.lineWrap). WebKit on Linux draws overlay scrollbars
// instead: each one that appears is shown, and 2 s later fades out at 60 frames a second for 3 s
// (WebCore's ScrollbarsControllerGeneric). The notebook's and a long code line's appeared while
// Python starts, and without a GPU each of those frames was composited on the CPU that Python
// needed: about 2 CPU s, and the first output about a tenth later (benchmarks/webkit_probe.py
// --ab). Chromium and WebKit take ::-webkit-scrollbar; Firefox keeps its own. The thumb has the
// theme's secondary text colour (light and dark).
// 17. Where Noto Sans CJK TC is installed (Linux), it draws the notebook's text, Latin too, as in
// the lesson (site/assets/course.css says why: WebKitGTK looks up every family before the one that
// draws); elsewhere JupyterLab's own stack, which follows it. (The theme settings' "overrides"
// are read from the learner's own settings only, not from overrides.json.) html:root outranks
// the theme's :root, which loads later.
// A slider's handle is 24 px under a finger (WCAG 2.5.8's smallest target; ipywidgets' is 16 px).
// 18. A display formula wider than the notebook (MathJax's, in a Markdown cell: lesson 1's
// E[每輪 token 數] = 1 + α + ⋯ at 390 px) was cut at the cell's edge with nothing saying there
// was more, and the rest out of reach; it scrolls sideways now (on a desktop its scrollbar, 16.,
// shows that it does; a phone shows its overlay scrollbar once it is swiped).
// The File menu's "New Console for …" has no label where there is no console (the lab has none):
// it was an empty, disabled row. Hidden here: overrides.json can drop a menu item too, but then
// JupyterLab warns on every load that the item is "duplicated".
const FONTS = "'Noto Sans CJK TC', system-ui, -apple-system, blinkmacsystemfont, 'Segoe UI', helvetica,"
  + " arial, sans-serif, 'Apple Color Emoji', 'Segoe UI Emoji', 'Segoe UI Symbol'";
const style = document.createElement('style');
style.textContent = '.jp-NotebookTrustedStatus, .jp-NotebookKernelStatus { display: none; }\n'
  + '.lm-Menu-item[data-command="filemenu:create-console"] { display: none; }\n'
  + 'body .jp-OutputArea-output pre { word-break: normal; overflow-wrap: anywhere; }\n'
  + '.jp-RenderedMarkdown mjx-container[display="true"] { overflow-x: auto; overflow-y: hidden; }\n'
  + 'body { text-spacing-trim: space-all; }\n'     // every full-width mark a full em, as course.css
  + '::-webkit-scrollbar { width: 10px; height: 10px; }\n'
  + '::-webkit-scrollbar-track, ::-webkit-scrollbar-corner { background: transparent; }\n'
  + '::-webkit-scrollbar-thumb { background: var(--jp-ui-font-color2, #757575); border: 2px solid transparent;'
  + ' background-clip: content-box; border-radius: 5px; }'
  + (window.frameElement ? '\nbody .jp-KernelStatus-spinner, body .jp-SpinnerContent { animation: none; }' : '')
  + `\nhtml:root { --jp-ui-font-family: ${FONTS}; --jp-content-font-family: ${FONTS}; }`
  + '\n@media (pointer: coarse) { html:root { --jp-widgets-slider-handle-size: 24px; } }'
  + `\n.jp-RenderedMarkdown .sd-sign { font-family: 'Liberation Sans', 'Noto Sans', 'DejaVu Sans', ${FONTS}; }`
  + `\n.jp-RenderedMarkdown .sd-sup { font-family: 'DejaVu Sans', 'Noto Sans', ${FONTS}; }`;
document.head.append(style);

// 22. Where Noto Sans CJK TC draws the notebook's text (17.), it gives × ÷ ± · − ≈ ≤ ≥ a full em,
// as it does ideographs: a Markdown cell's "(1 + K·c) ÷ E" read "(1 + K・c) ÷ E". The lesson and
// the notebook's preview wrap each in <span class="sd-sign"> as they are built
// (site/hooks/signs.py), and each run of superscript digits in <span class="sd-sup">; the live
// notebook's Markdown gets the same spans as JupyterLab renders it, drawn by the fonts the
// lesson's course.css names (style above). Only text: never inside code, a formula (MathJax's
// output), or a text still holding TeX (MathJax typesets it next, and a span would break it: its
// text around the formula is wrapped once MathJax has replaced the TeX).
// (the same signs and superscripts as site/hooks/signs.py's SIGNS and SUPERSCRIPTS, the same
// fonts as course.css's .sd-sign and .sd-sup: tests/test_lab_build.py checks that they agree)
const SIGN = /[×÷±·−≈≤≥⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]/;
const SIGNS = /([×÷±·−≈≤≥])|([⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+)/g;
const NOT_HERE = 'code, pre, mjx-container, math, script, style, textarea, .sd-sign, .sd-sup';
const TEX = /\$|\\\(|\\\[/;
function narrowSigns(markdown) {
  const walker = document.createTreeWalker(markdown, NodeFilter.SHOW_TEXT);
  const texts = [];
  while (walker.nextNode()) {
    const text = walker.currentNode;
    if (SIGN.test(text.data) && !TEX.test(text.data) && !text.parentElement.closest(NOT_HERE)) texts.push(text);
  }
  for (const text of texts) {
    const parts = document.createDocumentFragment();
    let at = 0;
    for (const found of text.data.matchAll(SIGNS)) {
      parts.append(text.data.slice(at, found.index));
      const span = document.createElement('span');
      span.className = found[1] ? 'sd-sign' : 'sd-sup';
      span.textContent = found[0];
      parts.append(span);
      at = found.index + found[0].length;
    }
    parts.append(text.data.slice(at));
    text.replaceWith(parts);
  }
}
// Through JupyterLab's renderer, not a MutationObserver on the notebook: with one observing it
// as the notebook is first drawn, your-gpu's first live output came 0.6 s later in WebKit and
// 0.4 s in Firefox (benchmarks/engines.py --variant, 3 rounds, every round later); this way
// it did not (benchmarks/README.md). Each Markdown renderer (cells and Markdown outputs) narrows
// its node once it has rendered, and MathJax's typesetter each node once it has typeset it.
function narrowSignsInMarkdown(notebook) {
  const rendermime = notebook.rendermime;
  const factory = rendermime && rendermime.getFactory('text/markdown');
  if (factory && !factory.narrowsSigns) {
    const createRenderer = factory.createRenderer.bind(factory);
    factory.createRenderer = (options) => {
      const renderer = createRenderer(options);
      const renderModel = renderer.renderModel.bind(renderer);
      renderer.renderModel = (model, ...rest) => renderModel(model, ...rest).then((done) => {
        narrowSigns(renderer.node);
        return done;
      });
      return renderer;
    };
    factory.narrowsSigns = true;
  }
  const typesetter = rendermime && rendermime.latexTypesetter;
  if (typesetter && !typesetter.narrowsSigns) {
    const typeset = typesetter.typeset.bind(typesetter);
    typesetter.typeset = (node) => Promise.resolve(typeset(node)).then(() => narrowSigns(node));
    typesetter.narrowsSigns = true;
  }
  notebook.node.querySelectorAll('.jp-RenderedMarkdown').forEach(narrowSigns);
}
