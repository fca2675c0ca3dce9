// eslint for static/js (make lint): plain scripts loaded by <script> tags, no modules and no
// build step, each wrapped in its own function and sharing only window.Redline (static/js/api.js).
const js = require("@eslint/js");
const globals = require("globals");

module.exports = [
  js.configs.recommended,
  {
    files: ["static/js/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "script",
      globals: globals.browser,
    },
  },
];
