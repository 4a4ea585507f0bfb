// 20.: the notebook's width told to Python, so a phone gets figures laid out for it.

// 20. How wide the notebook is, for its figures: in a narrow one (a phone's) specdec_lab's
// figures are laid out for it, two panels one above the other (specdec_lab/plotting/style.py);
// shrunk to a phone's width, the ones made for a wide panel had 6-8 px labels. The width goes
// into the lab's drive (this tab's memory, beside the notebook), where Python reads it as it
// makes a figure: no message to the kernel, nothing in the notebook, there again after a restart.
const WIDTH_FILE = '.specdec-lab-width';
function tellWidth(theApp) {
  let told = null;
  const tell = () => {
    const width = String(document.documentElement.clientWidth);
    if (width === told || width === '0') return;
    told = width;
    theApp.serviceManager.contents.save(WIDTH_FILE, { type: 'file', format: 'text', content: width })
      .catch((err) => { told = null; console.info('specdec-lab: the notebook width was not written', err); });
  };
  tell();
  let timer = null;
  window.addEventListener('resize', () => { clearTimeout(timer); timer = setTimeout(tell, 250); });
}
