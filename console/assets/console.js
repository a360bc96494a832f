// The staff console works without this script. It only adds two conveniences, both of which
// the Content-Security-Policy allows because they come from the console itself:
// a confirmation before irreversible actions (buttons with data-confirm), and a Copy button
// next to a new secret (buttons with data-copy, hidden until this script shows them).
"use strict";

document.addEventListener("submit", function (event) {
  var button = event.submitter;
  var message = button && button.getAttribute("data-confirm");
  if (message && !window.confirm(message)) {
    event.preventDefault();
  }
});

document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var field = document.getElementById(button.getAttribute("data-copy"));
    if (!field || !navigator.clipboard) {
      return;
    }
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(field.value).then(function () {
        button.textContent = "Copied";
      });
    });
  });
  document.querySelectorAll("input[readonly]").forEach(function (field) {
    field.addEventListener("focus", function () { field.select(); });
  });
});
