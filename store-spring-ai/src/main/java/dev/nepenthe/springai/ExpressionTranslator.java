package dev.nepenthe.springai;

import java.util.Collection;
import org.springframework.ai.vectorstore.filter.Filter;

/**
 * Turns Spring AI's filter expressions (the object form, and so the text form Spring AI parses into
 * it, {@code "country == 'BG' && year >= 2020"}) into the store's own filters, which narrow the
 * candidates a search's index sees.
 *
 * <p>A missing key fails every comparison and passes {@code NE}, {@code NIN} and {@code ISNULL},
 * which are the negations of equality, membership and presence. A value of another kind than the
 * filter's (a string against a number) does not match. Numbers compare by exact value across
 * Integer, Long, Float and Double.
 */
final class ExpressionTranslator {

    private ExpressionTranslator() {}

    /**
     * The store's filter for a Spring AI expression.
     *
     * @throws UnsupportedOperationException for an expression type or operand the store has no
     *     equivalent of
     * @throws IllegalArgumentException for a malformed expression or a value metadata cannot hold
     */
    static dev.nepenthe.core.Filter toStore(Filter.Operand operand) {
        if (operand instanceof Filter.Group g) {
            return toStore(g.content());
        }
        if (!(operand instanceof Filter.Expression e)) {
            throw new IllegalArgumentException(
                    "filter: expected an expression or a group, got "
                            + (operand == null ? "null" : operand.getClass().getSimpleName()));
        }
        return switch (e.type()) {
            case AND -> toStore(e.left()).and(toStore(e.right()));
            case OR -> toStore(e.left()).or(toStore(e.right()));
            case NOT -> dev.nepenthe.core.Filter.not(toStore(e.left()));
            case EQ -> dev.nepenthe.core.Filter.eq(key(e), value(e));
            case NE -> dev.nepenthe.core.Filter.not(dev.nepenthe.core.Filter.eq(key(e), value(e)));
            case GT -> dev.nepenthe.core.Filter.gt(key(e), value(e));
            case GTE -> dev.nepenthe.core.Filter.gte(key(e), value(e));
            case LT -> dev.nepenthe.core.Filter.lt(key(e), value(e));
            case LTE -> dev.nepenthe.core.Filter.lte(key(e), value(e));
            case IN -> dev.nepenthe.core.Filter.in(key(e), values(e));
            case NIN ->
                    dev.nepenthe.core.Filter.not(dev.nepenthe.core.Filter.in(key(e), values(e)));
            case ISNULL -> dev.nepenthe.core.Filter.not(dev.nepenthe.core.Filter.exists(key(e)));
            case ISNOTNULL -> dev.nepenthe.core.Filter.exists(key(e));
            default ->
                    throw new UnsupportedOperationException(
                            "filter: Spring AI's " + e.type() + " has no Nepenthe equivalent");
        };
    }

    private static String key(Filter.Expression e) {
        if (!(e.left() instanceof Filter.Key k)) {
            throw new IllegalArgumentException(
                    "filter "
                            + e.type()
                            + ": expected a key on the left, got "
                            + (e.left() == null ? "nothing" : e.left().getClass().getSimpleName()));
        }
        // The text parser keeps the quotes of a quoted key ("'my key' == 1"); the key is inside
        // them.
        String key = k.key();
        if (key.length() >= 2
                && ((key.startsWith("\"") && key.endsWith("\""))
                        || (key.startsWith("'") && key.endsWith("'")))) {
            key = key.substring(1, key.length() - 1);
        }
        return key;
    }

    private static Object value(Filter.Expression e) {
        if (!(e.right() instanceof Filter.Value v) || v.value() == null) {
            throw new IllegalArgumentException(
                    "filter "
                            + e.type()
                            + ": expected a value on the right, got "
                            + (e.right() == null
                                    ? "nothing"
                                    : e.right().getClass().getSimpleName()));
        }
        if (v.value() instanceof Collection<?>) {
            throw new IllegalArgumentException(
                    "filter "
                            + e.type()
                            + ": expected one value, got a list (IN and NIN take lists)");
        }
        return v.value();
    }

    private static Object[] values(Filter.Expression e) {
        if (!(e.right() instanceof Filter.Value v)
                || !(v.value() instanceof Collection<?> list)
                || list.isEmpty()) {
            throw new IllegalArgumentException(
                    "filter " + e.type() + ": expected a non-empty list of values on the right");
        }
        return list.toArray();
    }
}
