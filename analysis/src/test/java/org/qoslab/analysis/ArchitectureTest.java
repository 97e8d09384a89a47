package org.qoslab.analysis;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.lang.conditions.ArchConditions;

/**
 * Package rules of the analysis module (analysis/README.md, "Package rules"). One package in three
 * layers: the statistics (numbers in, numbers out), the readers of trials.csv and call records,
 * the CLI.
 */
@AnalyzeClasses(packages = "org.qoslab.analysis", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {
    static final DescribedPredicate<JavaClass> STATISTICS = belongToAnyOf(TrialStats.class, Effects.class,
            Bootstrap.class, ShapiroWilk.class, CallStats.class).as("the statistics");
    static final DescribedPredicate<JavaClass> READERS = belongToAnyOf(Trials.class, CallsFile.class).as("the readers");
    static final DescribedPredicate<JavaClass> CLI = belongToAnyOf(Main.class).as("the CLI");

    /** The one statistics method allowed to name I/O types: {@code CallStats.read}, which delegates to {@link CallsFile}. */
    static final String READ_DELEGATE = "Method <" + CallStats.class.getName() + ".read(";

    static final IoClasses IO = new IoClasses();

    /** Statistics do no I/O and know no CLI: they are computed on arrays, in tests and from any caller. */
    @ArchTest
    static final ArchRule statistics_do_no_io = classes().that(STATISTICS).should(new ArchCondition<JavaClass>(
            "depend on no I/O (java.io, java.nio), picocli, JSON or reader class, except CallStats.read's delegation") {
        @Override
        public void check(JavaClass c, ConditionEvents events) {
            for (Dependency d : c.getDirectDependenciesFromSelf()) {
                if (IO.test(d.getTargetClass()) && !d.getDescription().startsWith(READ_DELEGATE)) {
                    events.add(SimpleConditionEvent.violated(d, d.getDescription()));
                }
            }
        }
    }).because("the statistics take arrays and return maps; reading files and writing JSON is the readers' and the CLI's");

    /** I/O, the CLI library, JSON, and the readers. */
    static final class IoClasses extends DescribedPredicate<JavaClass> {
        IoClasses() { super("I/O"); }

        @Override
        public boolean test(JavaClass t) {
            JavaClass c = t.isArray() ? t.getBaseComponentType() : t;
            String n = c.getPackageName();
            return n.startsWith("java.io") || n.startsWith("java.nio") || n.startsWith("picocli")
                    || n.startsWith("org.qoslab.common") || READERS.test(c) || CLI.test(c);
        }
    }

    /** Layers: statistics < readers < CLI. */
    @ArchTest
    static final ArchRule layers = layeredArchitecture().consideringOnlyDependenciesInLayers()
            .layer("Statistics").definedBy(STATISTICS)
            .layer("Readers").definedBy(READERS)
            .layer("Cli").definedBy(CLI)
            .whereLayer("Cli").mayNotBeAccessedByAnyLayer()
            .whereLayer("Readers").mayOnlyBeAccessedByLayers("Cli")
            .whereLayer("Statistics").mayOnlyBeAccessedByLayers("Readers", "Cli")
            .ignoreDependency(CallStats.class, CallsFile.class); // CallStats.read, kept for its callers, delegates

    /** Every class is in a layer (a new class is placed in the rules). */
    @ArchTest
    static final ArchRule every_class_is_in_a_layer = classes().should(ArchConditions.be(STATISTICS.or(READERS).or(CLI)));

    /** picocli is the CLI's alone. */
    @ArchTest
    static final ArchRule picocli_only_in_the_cli = noClasses().that(DescribedPredicate.not(CLI))
            .should().dependOnClassesThat().resideInAnyPackage("picocli..");

    /** The analysis depends on java-common only, never on the capture or the workload. */
    @ArchTest
    static final ArchRule no_other_tool = noClasses().should().dependOnClassesThat()
            .resideInAnyPackage("org.qoslab.capture..", "org.qoslab.workload..");
}
