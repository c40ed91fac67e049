"""openCypher read queries: grammar, parser, checker, planner to DuckDB SQL, executor."""
