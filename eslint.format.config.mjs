// Formatting: `npm run format` rewrites, `npm run format:check` reports.
// dprint, run through @effect/eslint-plugin as the Effect repository runs it,
// with Effect's settings (2 spaces, no semicolons, double quotes, no trailing
// commas, arrow parameters in parentheses) fitted to this code as it was
// written: 160 columns rather than 120, `function* ()`, single quotes kept
// around text with double quotes in it, and imports, named imports and
// braces left in the order and shape they were written.
import * as effectEslint from "@effect/eslint-plugin"
import { defineConfig } from "eslint/config"
import tseslint from "typescript-eslint"

export default defineConfig(
  { ignores: ["dist/", "test-results/", "scripts/bench/.*.bundle.mjs"] },
  {
    files: ["**/*.ts", "**/*.mjs", "**/*.cjs"],
    languageOptions: { parser: tseslint.parser },
    linterOptions: { reportUnusedDisableDirectives: "off" },
    plugins: { "@effect": effectEslint },
    rules: {
      "@effect/dprint": [
        "error",
        {
          config: {
            indentWidth: 2,
            lineWidth: 160,
            semiColons: "asi",
            quoteStyle: "preferDouble",
            trailingCommas: "never",
            operatorPosition: "maintain",
            "arrowFunction.useParentheses": "force",
            "functionExpression.spaceAfterFunctionKeyword": true,
            "module.sortImportDeclarations": "maintain",
            "importDeclaration.sortNamedImports": "maintain",
            "exportDeclaration.sortNamedExports": "maintain",
            "ifStatement.useBraces": "maintain",
            "forStatement.useBraces": "maintain",
            "forInStatement.useBraces": "maintain",
            "forOfStatement.useBraces": "maintain",
            "whileStatement.useBraces": "maintain"
          }
        }
      ]
    }
  }
)
