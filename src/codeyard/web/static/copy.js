// Copy buttons: <button data-copy="#element-id"> copies that input's value. No inline script anywhere (CSP).
document.addEventListener("click", function (event) {
  var button = event.target.closest("button[data-copy]");
  if (!button) return;
  var source = document.querySelector(button.getAttribute("data-copy"));
  if (!source) return;
  var done = function () { button.textContent = "Copied"; setTimeout(function () { button.textContent = "Copy"; }, 1500); };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(source.value).then(done);
  } else {
    source.select();
    document.execCommand("copy");
    done();
  }
});
