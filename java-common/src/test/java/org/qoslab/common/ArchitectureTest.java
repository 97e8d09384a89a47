package org.qoslab.common;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * Package rules of java-common (java-common/README.md, "Package rules"): the bottom of the Java
 * reactor, shared by the workload, the capture and the analysis tools.
 */
@AnalyzeClasses(packages = "org.qoslab.common", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {
    /** Nothing below it: the other modules depend on java-common, never the other way round. */
    @ArchTest
    static final ArchRule no_other_qoslab_module = noClasses().should().dependOnClassesThat()
            .resideInAnyPackage("org.qoslab.workload..", "org.qoslab.capture..", "org.qoslab.analysis..")
            .because("java-common is the bottom of the reactor");

    /** Only the JDK: a tool that uses java-common pulls in no third-party library through it. */
    @ArchTest
    static final ArchRule only_the_jdk = classes().should().onlyDependOnClassesThat()
            .resideInAnyPackage("org.qoslab.common..", "java..")
            .because("java-common brings no third-party dependency to the tools");
}
