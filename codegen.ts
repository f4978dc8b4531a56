// graphql-codegen: types every operation the spiders and the web use, from the committed
// schema.graphql (printed from the Pothos schema by `npm run schema:print`).
import type { CodegenConfig } from "@graphql-codegen/cli";

const config: CodegenConfig = {
  schema: "schema.graphql",
  ignoreNoDocuments: true,
  generates: {
    "spiders/src/gql/": {
      documents: ["spiders/src/**/*.graphql"],
      preset: "client",
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { Date: "string", DateTime: "string", ID: "string" },
      },
      presetConfig: { fragmentMasking: false },
    },
    "web/src/gql/": {
      documents: ["web/src/**/*.graphql"],
      preset: "client",
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        scalars: { Date: "string", DateTime: "string", ID: "string" },
      },
      presetConfig: { fragmentMasking: false },
    },
  },
};

export default config;
