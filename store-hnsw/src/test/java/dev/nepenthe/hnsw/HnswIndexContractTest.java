package dev.nepenthe.hnsw;

import dev.nepenthe.testing.index.VectorIndexContract;
import java.util.Map;

/** HNSW keeps the index contract at a small M and a generous beam. */
class HnswIndexContractTest extends VectorIndexContract {

    @Override
    protected String kind() {
        return "hnsw";
    }

    @Override
    protected Map<String, String> params() {
        return Map.of(
                HnswParams.M, "8", HnswParams.EF_CONSTRUCTION, "64", HnswParams.EF_SEARCH, "64");
    }

    @Override
    protected double minRecall() {
        return 0.95;
    }
}
