package dev.nepenthe.testing.index;

import java.util.Map;

/** The exact index keeps the index contract, with recall 1 (it is the oracle's own algorithm). */
class ExactIndexContractTest extends VectorIndexContract {

    @Override
    protected String kind() {
        return "exact";
    }

    @Override
    protected Map<String, String> params() {
        return Map.of();
    }

    @Override
    protected double minRecall() {
        return 1.0;
    }
}
