/* A command-line option typed into the search box as the lessons write it finds what it names.
 *
 * Material's search runs lunr, which reads a term that starts with "-" as "must not contain":
 * "--max-num-seqs", copied from a lesson, found nothing ("max-num-seqs" found it on three pages).
 * Before the theme's bundle starts its search worker, this wraps the Worker constructor so that
 * the query messages sent to that worker lose the hyphens that start a word before a letter
 * (the index splits words at hyphens anyway). Nobody reading a zh-TW course types lunr's
 * exclusion syntax; everything else in the query is sent as it was typed. No dependencies.
 */
(function () {
  "use strict";

  const NativeWorker = window.Worker;
  const SEARCH_WORKER = /\/workers\/search\.[^/]*\.js(\?|$)/;
  const QUERY = 2;                         // Material's SearchMessageType.QUERY
  const OPTION_HYPHENS = /(^|\s)-+(?=[A-Za-z])/g;
  if (!NativeWorker || NativeWorker.sdSearchQuery) return;

  function SearchAwareWorker(url, options) {
    const worker = new NativeWorker(url, options);
    if (SEARCH_WORKER.test(String(url))) {
      const post = worker.postMessage.bind(worker);
      worker.postMessage = (message, ...rest) => post(
        message && message.type === QUERY && typeof message.data === "string"
          ? { ...message, data: message.data.replace(OPTION_HYPHENS, "$1") } : message, ...rest);
    }
    return worker;
  }
  SearchAwareWorker.prototype = NativeWorker.prototype;
  SearchAwareWorker.sdSearchQuery = true;
  window.Worker = SearchAwareWorker;
})();
