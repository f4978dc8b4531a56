// graphql-codegen: types every operation the spiders and the web use, from the committed
// schema.graphql (printed from the Pothos schema by `npm run schema:print`).
import type { CodegenConfig } from "@graphql-codegen/cli";

/** The client preset, the same for every consumer: operations in `<dir>/**\/*.graphql` → `<dir>/gql/`. */
const client = (dir: string) => ({
  documents: [`${dir}/**/*.graphql`],
  preset: "client" as const,
  config: {
    useTypeImports: true,
    enumsAsTypes: true,
    scalars: { Date: "string", DateTime: "string", ID: "string" },
  },
  presetConfig: { fragmentMasking: false },
});

const config: CodegenConfig = {
  schema: "schema.graphql",
  ignoreNoDocuments: true,
  generates: {
    "spiders/src/gql/": client("spiders/src"),
    "web/src/gql/": client("web/src"),
  },
};

export default config;
