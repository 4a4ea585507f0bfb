// 21.: the lab's English that never passes its translator, said in Chinese.

// 21. The lab's interface is in Chinese through its translator (the zh-TW language pack and
// site/lab/ui-zh_TW.json, both in api/translations/zh_TW.json), and some of its English never
// passes it. JupyterLab makes its registry of file types, with their names, before any plugin
// (the translator is one) has run: the File menu's items named after the notebook's file type
// said "儲存 Notebook", "另存 Notebook 為…", "從硬碟上重新載入 Notebook" and "將 Notebook 還原到
// 檢查點…". So once the plugins are in, every file type's name is looked up again ("Notebook" ->
// 筆記本; one already translated stays as it is). Notebook 7 labels View > 右側欄's items
// `Show ${caption}`, English around a translated name ("Show 筆記本工具"): that label goes
// through its msgid "Show %1" here. And a few titles and aria-labels are written in English
// without the translator: JupyterLite's kernel indicator ("Click to open kernel logs"), and what
// a screen reader says for the notebook and its toolbar ("main area content", "main area
// toolbar", and "More commands" for the ⋯ that a narrow toolbar folds its items into: JupyterLab
// gives the notebook's panel no translator), its cells ("Cells"), a Markdown or raw cell (no
// translator either; a code cell says 程式碼儲存格內容) and the active cell's toolbar ("Cell
// toolbar"; the same): such a value is translated wherever it is written.
const TOGGLE_PANEL = 'application:toggle-panel';
const UNTRANSLATED = [   // [domain, attribute, English]
  ['jupyterlite', 'title', 'Click to open kernel logs'],
  ['jupyterlab', 'aria-label', 'main area content'],
  ['jupyterlab', 'aria-label', 'main area toolbar'],
  ['jupyterlab', 'title', 'More commands'],
  ['jupyterlab', 'aria-label', 'More commands'],
  ['jupyterlab', 'aria-label', 'Cells'],
  ['jupyterlab', 'aria-label', 'Markdown Cell Content'],
  ['jupyterlab', 'aria-label', 'Raw Cell Content'],
  ['jupyterlab', 'aria-label', 'Cell toolbar'],
];
function translateTheRest(theApp) {
  const translator = theApp.shell && theApp.shell.translator;   // Notebook's shell has the lab's
  if (!translator) return;
  const lab = translator.load('jupyterlab');
  for (const fileType of theApp.docRegistry.fileTypes()) fileType.displayName = lab.__(fileType.displayName);
  const notebook = translator.load('notebook');
  const label = theApp.commands.label.bind(theApp.commands);
  theApp.commands.label = (id, args) => {
    const text = label(id, args);
    const shown = id === TOGGLE_PANEL && /^Show (.+)$/.exec(text);
    return shown ? notebook.__('Show %1', shown[1]) : text;
  };
  const selector = UNTRANSLATED.map(([, name, english]) => `[${name}="${english}"]`).join(', ');
  const translate = (element) => {
    for (const [domain, name, english] of UNTRANSLATED) {
      if (element.getAttribute(name) === english) element.setAttribute(name, translator.load(domain).__(english));
    }
  };
  new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === 'attributes') {
        if (record.target.matches(selector)) translate(record.target);
        continue;
      }
      for (const node of record.addedNodes) {
        if (node.nodeType !== 1) continue;
        if (node.matches(selector)) translate(node);
        node.querySelectorAll(selector).forEach(translate);
      }
    }
  }).observe(document.body, { subtree: true, childList: true, attributes: true,
                              attributeFilter: ['title', 'aria-label'] });
  document.querySelectorAll(selector).forEach(translate);
}
