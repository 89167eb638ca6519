// Runs after require.js and before the ipywidgets HTML manager (gdcourse.site.WIDGETS).
(function () {
  // The manager's modules look for their fonts beside the address require.js gives them. Both the
  // bare module and those under dist/ must resolve into vendor/html-manager/dist/, here, not a CDN.
  var dist = new URL("vendor/html-manager/dist/", document.currentScript.src).href;
  require.config({paths: {"@jupyter-widgets/html-manager": dist + "index",
                          "@jupyter-widgets/html-manager/dist": dist.replace(/\/$/, "")}});

  // The manager typesets widget output with MathJax 2's MathJax.Hub.Queue; the book loads MathJax 3,
  // and only on pages with math (window.MathJax is then its configuration until MathJax starts).
  if (window.MathJax === undefined) return;
  var pending = [];
  var hub = {Queue: function (command) {
    var node = command[2];
    if (window.MathJax.typesetPromise) return window.MathJax.typesetPromise([node]);
    pending.push(node);  // before MathJax has started: typeset once it has
  }};
  var config = window.MathJax;
  config.Hub = hub;
  var ready = config.startup && config.startup.ready;
  config.startup = Object.assign({}, config.startup, {ready: function () {
    if (ready) ready(); else MathJax.startup.defaultReady();
    MathJax.Hub = hub;
    MathJax.startup.promise.then(function () { if (pending.length) MathJax.typesetPromise(pending); });
  }});
})();
