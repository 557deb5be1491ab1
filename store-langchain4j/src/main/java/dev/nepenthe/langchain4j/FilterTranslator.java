package dev.nepenthe.langchain4j;

import dev.langchain4j.store.embedding.filter.Filter;
import dev.langchain4j.store.embedding.filter.comparison.ContainsString;
import dev.langchain4j.store.embedding.filter.comparison.IsEqualTo;
import dev.langchain4j.store.embedding.filter.comparison.IsGreaterThan;
import dev.langchain4j.store.embedding.filter.comparison.IsGreaterThanOrEqualTo;
import dev.langchain4j.store.embedding.filter.comparison.IsIn;
import dev.langchain4j.store.embedding.filter.comparison.IsLessThan;
import dev.langchain4j.store.embedding.filter.comparison.IsLessThanOrEqualTo;
import dev.langchain4j.store.embedding.filter.comparison.IsNotEqualTo;
import dev.langchain4j.store.embedding.filter.comparison.IsNotIn;
import dev.langchain4j.store.embedding.filter.logical.And;
import dev.langchain4j.store.embedding.filter.logical.Not;
import dev.langchain4j.store.embedding.filter.logical.Or;
import java.util.Collection;
import java.util.UUID;

/**
 * Turns LangChain4j's metadata filters into the store's own ({@link dev.nepenthe.core.Filter}), so
 * a search narrows the candidates the index sees instead of filtering a larger result afterwards,
 * and a metadata forget scope can be written as a LangChain4j filter.
 *
 * <p>The semantics follow LangChain4j's in-memory store where the contract suite pins them: a
 * missing key fails every comparison and passes {@code IsNotEqualTo} and {@code IsNotIn} (they are
 * translated as the negation of equality and membership). Values are compared as {@link
 * MetadataCodec} stores them: a UUID as its string, numbers by exact value across Integer, Long,
 * Float and Double. Where LangChain4j's in-memory store throws on a value of another type than the
 * filter's (a string against a number), the store's filter simply does not match.
 */
final class FilterTranslator {

    private FilterTranslator() {}

    /**
     * The store's filter for a LangChain4j filter.
     *
     * @throws UnsupportedOperationException for a filter class the store has no equivalent of, or
     *     an order comparison on a UUID
     * @throws IllegalArgumentException for a comparison value of a type metadata cannot hold
     */
    static dev.nepenthe.core.Filter toStore(Filter filter) {
        return switch (filter) {
            case IsEqualTo f ->
                    dev.nepenthe.core.Filter.eq(f.key(), value(f.key(), f.comparisonValue()));
            case IsNotEqualTo f ->
                    dev.nepenthe.core.Filter.not(
                            dev.nepenthe.core.Filter.eq(
                                    f.key(), value(f.key(), f.comparisonValue())));
            case IsGreaterThan f ->
                    dev.nepenthe.core.Filter.gt(f.key(), ordered(f.key(), f.comparisonValue()));
            case IsGreaterThanOrEqualTo f ->
                    dev.nepenthe.core.Filter.gte(f.key(), ordered(f.key(), f.comparisonValue()));
            case IsLessThan f ->
                    dev.nepenthe.core.Filter.lt(f.key(), ordered(f.key(), f.comparisonValue()));
            case IsLessThanOrEqualTo f ->
                    dev.nepenthe.core.Filter.lte(f.key(), ordered(f.key(), f.comparisonValue()));
            case IsIn f ->
                    dev.nepenthe.core.Filter.in(f.key(), values(f.key(), f.comparisonValues()));
            case IsNotIn f ->
                    dev.nepenthe.core.Filter.not(
                            dev.nepenthe.core.Filter.in(
                                    f.key(), values(f.key(), f.comparisonValues())));
            case ContainsString f ->
                    dev.nepenthe.core.Filter.contains(f.key(), f.comparisonValue());
            case And f -> toStore(f.left()).and(toStore(f.right()));
            case Or f -> toStore(f.left()).or(toStore(f.right()));
            case Not f -> dev.nepenthe.core.Filter.not(toStore(f.expression()));
            default ->
                    throw new UnsupportedOperationException(
                            "LangChain4j filter "
                                    + filter.getClass().getName()
                                    + " has no Nepenthe equivalent; expected IsEqualTo,"
                                    + " IsNotEqualTo, IsGreaterThan, IsGreaterThanOrEqualTo,"
                                    + " IsLessThan, IsLessThanOrEqualTo, IsIn, IsNotIn,"
                                    + " ContainsString, And, Or or Not");
        };
    }

    /**
     * A comparison value as the store keeps metadata (the store widens Integer and Float itself).
     */
    private static Object value(String key, Object v) {
        return switch (v) {
            case UUID u -> u.toString();
            case String s -> s;
            case Integer i -> i;
            case Long l -> l;
            case Float f -> f;
            case Double d -> d;
            case Boolean b -> b;
            default ->
                    throw new IllegalArgumentException(
                            "filter on '"
                                    + key
                                    + "': expected a String, UUID, Integer, Long,"
                                    + " Float, Double or Boolean to compare with, got "
                                    + v.getClass().getName());
        };
    }

    private static Object ordered(String key, Object v) {
        if (v instanceof UUID) {
            // Stored as strings, UUIDs would order by their text, not as UUID.compareTo orders
            // them.
            throw new UnsupportedOperationException(
                    "filter on '"
                            + key
                            + "': UUIDs have no order in Nepenthe's filters (they are kept as"
                            + " strings); expected a String or number to order by");
        }
        return value(key, v);
    }

    private static Object[] values(String key, Collection<?> vs) {
        return vs.stream().map(v -> value(key, v)).toArray();
    }
}
