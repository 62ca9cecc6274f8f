// ESLint for the phone page's scripts (xattn/server/assets/), the Streamlit page's own
// (xattn/ui/assets/) and their tests (tests/js/): `npx eslint` (CI: tests/test_js.py). The
// phone's modules are ES modules joined into one script at serve time (xattn/server/scripts.py);
// the Streamlit page's components are ES modules too (components.v2); work.js, token.js,
// countdown.js and tap_hover.js are classic scripts.
import js from "@eslint/js";
import globals from "globals";

const rules = {
  "no-unused-vars": ["error", { args: "none", caughtErrors: "none" }],
  "no-shadow": "off",
  eqeqeq: ["error", "always"],
  "no-var": "error",
  "prefer-const": "error",
  "no-implicit-globals": "error",
};

export default [
  js.configs.recommended,
  {
    files: ["xattn/server/assets/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module",
      globals: { ...globals.browser, JOIN: "readonly", CATALOG: "readonly", LATE: "readonly", XATTN_WORK: "readonly" } },
    rules: rules,
  },
  {
    files: ["xattn/ui/assets/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: globals.browser },
    rules: rules,
  },
  {
    files: ["xattn/server/assets/work.js", "xattn/server/assets/token.js",
      "xattn/ui/assets/countdown.js", "xattn/ui/assets/tap_hover.js"],
    languageOptions: { sourceType: "script" },
  },
  {
    files: ["xattn/server/assets/work.js"],
    languageOptions: { globals: { XATTN_WORK: "off" } },
  },
  {
    files: ["tests/js/**/*.js", "eslint.config.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: { ...globals.node } },
    rules: rules,
  },
];
