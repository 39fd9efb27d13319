#!/usr/bin/env node
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { ProductionReadinessChecks } from '../lib/checks';
import { ClusteringStack } from '../lib/examples/clustering-stack';
import { RecommenderStack } from '../lib/examples/recommender-stack';

const app = new App();
// Real values for `cdk deploy`: -c recommender.imageUri=… -c recommender.modelDataUrl=… (or the
// unprefixed -c imageUri=… -c modelDataUrl=… for both stacks). Without them each stack deploys AWS's framework
// image for its region and the model.tar.gz this repo builds (npm run bundle), all offline at synth.
const ctx = (stack: string, key: string): string | undefined => app.node.tryGetContext(`${stack}.${key}`) ?? app.node.tryGetContext(key);

// -c alarmEmail=you@example.com[,other@example.com] subscribes people to both stacks' alarm topics.
const alarmEmails = ctx('all', 'alarmEmail')?.split(',').filter(Boolean);

new RecommenderStack(app, 'RecommenderEndpoint', {
  imageUri: ctx('recommender', 'imageUri'),
  modelDataUrl: ctx('recommender', 'modelDataUrl'),
  alarmEmails,
  description: 'Incident A fixed: Transformer recommender on ml.g4dn.2xlarge with OOM protection',
});
new ClusteringStack(app, 'ClusteringEndpoint', {
  imageUri: ctx('clustering', 'imageUri'),
  modelDataUrl: ctx('clustering', 'modelDataUrl'),
  alarmEmails,
  description: 'Incident B fixed: K-Means clustering on ml.m5.xlarge with OOM protection',
});

// cdk-nag's AwsSolutions pack and this library's production-readiness rules fail `cdk synth` on errors.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ProductionReadinessChecks());
